package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/policyfile"
)

// docs is where the README's pictures are, from this package.
var docs = filepath.Join("..", "..", "docs", "pictures")

// TestPicturesUpToDate draws every picture into a temporary directory
// and compares it byte for byte with docs/pictures, which holds exactly
// these pictures.
func TestPicturesUpToDate(t *testing.T) {
	pics, err := render(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := write(dir, pics); err != nil {
		t.Fatal(err)
	}
	drawn, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := filepath.Glob(filepath.Join(docs, "*.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if len(drawn) != len(limits)+len(others) || len(committed) != len(drawn) {
		t.Errorf("drew %d pictures for %d limits and %d others; docs/pictures holds %d: run make pictures",
			len(drawn), len(limits), len(others), len(committed))
	}
	for _, path := range drawn {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		got, err := os.ReadFile(filepath.Join(docs, name))
		switch {
		case err != nil:
			t.Errorf("%v: run make pictures", err)
		case !bytes.Equal(got, want):
			t.Errorf("docs/pictures/%s is stale: run make pictures", name)
		}
	}
}

// TestDeterministic: two renderings are the same bytes, with no font
// embedded, the fallback fonts named, and a size fit for a README; and
// they are of every limit, then every other picture.
func TestDeterministic(t *testing.T) {
	a, err := render(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, err := render(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, l := range limits {
		want = append(want, l.Algorithm().Name+".svg")
	}
	for _, o := range others {
		want = append(want, o.name+".svg")
	}
	for _, f := range a {
		got = append(got, f.name)
	}
	if !slices.Equal(got, want) || !slices.Contains(got, "concurrency.svg") || !slices.Contains(got, "llm_gateway.svg") {
		t.Errorf("rendered %v; want %v, with concurrency.svg and llm_gateway.svg", got, want)
	}
	for i := range a {
		if a[i].name != b[i].name || !bytes.Equal(a[i].data, b[i].data) {
			t.Errorf("%s differs between two renderings", a[i].name)
		}
		if n := len(a[i].data); n > 40_000 || bytes.Contains(a[i].data, []byte("@font-face")) ||
			!bytes.Contains(a[i].data, fallbackFamilies) {
			t.Errorf("%s: %d bytes, or a font embedded, or no fallback font named", a[i].name, n)
		}
	}
}

// TestEveryAlgorithmDrawn: the pictures cover the catalogue, one limit
// per algorithm.
func TestEveryAlgorithmDrawn(t *testing.T) {
	var drawn, catalogue []string
	for _, l := range limits {
		drawn = append(drawn, l.Algorithm().Name)
	}
	for _, a := range policyfile.Algorithms() {
		if a.Library == limitspec.Catalogue {
			catalogue = append(catalogue, a.Name)
		}
	}
	slices.Sort(drawn)
	if !slices.Equal(drawn, catalogue) {
		t.Errorf("pictures of %v; the catalogue is %v", drawn, catalogue)
	}
}
