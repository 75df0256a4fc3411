package gen

// emitVectorsTest returns the test a user's package gets: it replays the
// vectors under testdata/vectors through package conformance on every
// embedded target (package goimpl's limiter, per request and through its
// bound handles, the scripts in gopher-lua and in miniredis), as
// limitspec's own are replayed (docs/vectors.md).
func emitVectorsTest(sp *Spec, o *Output) ([]byte, error) {
	var w writer
	goFileHeader(&w, sp.Source, o.limits.name)
	goImports(&w, []string{"testing"}, modulePath+"/conformance")
	w.line("")
	w.line("// TestVectors replays the vectors of testdata/vectors on every embedded")
	w.line("// target: each step must be decided as the vector says, and alike by all.")
	w.line("func TestVectors(t *testing.T) { conformance.Test(t, %q) }", "testdata/vectors")
	return formatGo(w, "the vectors test")
}
