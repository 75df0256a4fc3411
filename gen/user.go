package gen

import (
	"fmt"

	"github.com/limitspec/limitspec/spec"
)

// LoadUserSpec is LoadUser over the catalogue this module holds (package
// spec): what cmd/gen -spec compiles, and cmd/verify -spec runs.
func LoadUserSpec(library, file string, src []byte) (*Spec, error) {
	cat, err := LoadCatalogue(spec.Files)
	if err != nil {
		return nil, fmt.Errorf("the catalogue: %v", err)
	}
	return LoadUser(cat, library, file, src)
}
