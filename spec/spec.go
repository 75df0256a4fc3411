// Package spec holds the catalogue's spec, algorithms.yaml and
// policies.yaml, for the compiler: cmd/gen compiles it into this
// module's packages, and a user's own spec over it (its constants, reply
// and algorithms are in scope of every spec).
package spec

import "embed"

// Files are algorithms.yaml and policies.yaml.
//
//go:embed algorithms.yaml policies.yaml
var Files embed.FS
