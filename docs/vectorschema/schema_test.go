package vectorschema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/limitspec/limitspec/conformance"
)

// schemaFile is the vector format's JSON Schema.
const schemaFile = "../vector.schema.json"

// loadSchema compiles the vector format's JSON Schema.
func loadSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := jsonschema.NewCompiler().Compile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readJSON reads a file as the validator takes it.
func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// TestSchemaAcceptsEveryVector validates every vector of the repository
// against the schema: those under vectors/, a user's spec's (the example
// and the generator's test data) and this package's test data.
func TestSchemaAcceptsEveryVector(t *testing.T) {
	schema := loadSchema(t)
	n := 0
	for _, dir := range []string{"../../vectors", "../../examples/quota/testdata/vectors", "../../gen/testdata/user_vectors", "../../conformance/testdata/vectors"} {
		vs, err := conformance.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) == 0 {
			t.Errorf("%s: no vectors", dir)
		}
		for _, v := range vs {
			n++
			if err := schema.Validate(readJSON(t, v.File)); err != nil {
				t.Errorf("%s: %v", v.File, err)
			}
		}
	}
	t.Logf("%d vectors valid", n)
}

// TestDocExamplesAreVectors reads every JSON example of docs/vectors.md
// as a vector, and validates it against the schema.
func TestDocExamplesAreVectors(t *testing.T) {
	schema := loadSchema(t)
	doc, err := os.ReadFile("../vectors.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 5 {
		t.Fatalf("%d JSON examples", len(blocks))
	}
	for _, b := range blocks {
		v, err := conformance.Parse(b[1])
		if err != nil {
			t.Errorf("%v:\n%s", err, b[1])
			continue
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b[1]))
		if err == nil {
			err = schema.Validate(inst)
		}
		if err != nil {
			t.Errorf("%s: %v", v.Name, err)
		}
	}
}

// TestSchemaAndReaderRefuseBadVectors holds the schema and the reader
// (Parse) to the same refusals: each vector of testdata/badvectors breaks
// one rule of docs/vectors.md.
func TestSchemaAndReaderRefuseBadVectors(t *testing.T) {
	schema := loadSchema(t)
	files, _ := filepath.Glob("../../conformance/testdata/badvectors/*.json")
	if len(files) < 10 {
		t.Fatalf("%d bad vectors", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if err := schema.Validate(readJSON(t, f)); err == nil {
				t.Error("the schema accepts it")
			} else {
				t.Logf("schema: %v", err)
			}
			if _, err := conformance.LoadFile(f); err == nil {
				t.Error("the reader accepts it")
			} else {
				t.Logf("reader: %v", err)
			}
		})
	}
}

// TestSchemaNamesEveryField checks that each object of the schema lists
// exactly the JSON fields of the type that reads it.
func TestSchemaNamesEveryField(t *testing.T) {
	b, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	type object struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	var schema struct {
		object
		Defs map[string]object `json:"$defs"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		schema object
		typ    any
	}{
		{schema.object, conformance.Vector{}},
		{schema.Defs["policy"], conformance.Policy{}},
		{schema.Defs["limit"], conformance.PolicyLimit{}},
		{schema.Defs["step"], conformance.Step{}},
		{schema.Defs["expect"], conformance.Expect{}},
	} {
		var got []string
		for p := range tt.schema.Properties {
			got = append(got, p)
		}
		slices.Sort(got)
		if diff := cmp.Diff(jsonFields(tt.typ), got); diff != "" {
			t.Errorf("%T: fields (-) and the schema's properties (+):\n%s", tt.typ, diff)
		}
	}
}

// jsonFields are the JSON names of a struct's fields, sorted.
func jsonFields(x any) []string {
	var out []string
	typ := reflect.TypeOf(x)
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
