//go:build tools

package main

// The rls figure builds envoyproxy/ratelimit's command (rls.go); this
// import keeps the module, at the version Envoy Gateway pins, among
// go.mod's requirements.
import _ "github.com/envoyproxy/ratelimit/src/service_cmd/runner"
