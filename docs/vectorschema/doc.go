// Package vectorschema holds the tests that keep the vector format's
// JSON Schema (docs/vector.schema.json) and the vector reader of package
// conformance in agreement: the schema accepts every vector of the
// repository and the examples of docs/vectors.md, and refuses the bad
// vectors the reader refuses. It is a module of its own, so that the
// JSON Schema validator stays out of limitspec's go.mod.
package vectorschema
