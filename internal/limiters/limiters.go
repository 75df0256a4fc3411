// Package limiters holds what the limiters and their wrappers share
// about the contract (package limitspec) and which is not part of it:
// refusing nil values, telling an outage from a mistake, answering Check
// and Reset through a wrapped limiter, naming a policy's limit's state,
// making request ids, and the refusals of bound handles.
package limiters

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"reflect"
	"strconv"
	"sync/atomic"

	"github.com/limitspec/limitspec"
)

// IsNil reports whether v is nil or holds a nil pointer, map, slice,
// func or channel: a value whose methods may not be called. Constructors
// and limiters refuse such values rather than panic later.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch reflect.TypeOf(v).Kind() { // the type alone, for a value of no pointer kind (a typed limit)
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return reflect.ValueOf(v).IsNil()
	}
	return false
}

// Outage reports whether err (not nil) is one a fallback may decide
// around: any error but those matching limitspec.ErrBadInput and
// limitspec.ErrMisconfigured, which another limiter would only repeat or
// hide, and limitspec.ErrNoHold, an answer.
func Outage(err error) bool {
	return err != nil && !errors.Is(err, limitspec.ErrBadInput) && !errors.Is(err, limitspec.ErrMisconfigured) &&
		!errors.Is(err, limitspec.ErrNoHold)
}

// Check reports whether l can decide req's limit or policy: l's own
// verdict when it implements limitspec.Checker, else the Limit's
// Validate (a policy is then taken as decidable). Wrappers (package
// denials, lease, httplimit) answer their own Check with it.
func Check(l limitspec.Limiter, req limitspec.Request) error {
	if c, ok := l.(limitspec.Checker); ok {
		return c.Check(req)
	}
	if !IsNil(req.Limit) {
		return req.Limit.Validate()
	}
	return nil
}

// KeyInfix is what a policy's limit pl adds after the hash tag of each
// of its keys, so that no two limits of a policy, nor a policy's limit
// and the same limit on its own, share state: ":<limit>". The policy's
// name is not in it: limits of one name share their state across
// policies (the plans of a service, each a policy), as
// limitspec.NewPolicy says.
func KeyInfix(pl limitspec.PolicyLimit) string { return ":" + pl.Name }

// IDs makes request ids (docs/semantics.md, "Request ids") that no other
// process or limiter makes: a label, a random prefix of its own and a
// counter.
type IDs struct {
	prefix string
	n      atomic.Uint64
}

// NewIDs returns the ids "label:<random hex>:<n>".
func NewIDs(label string) *IDs {
	var random [8]byte
	rand.Read(random[:]) // never fails (crypto/rand)
	return &IDs{prefix: label + ":" + hex.EncodeToString(random[:]) + ":"}
}

// Next is a new id.
func (ids *IDs) Next() string { return ids.prefix + strconv.FormatUint(ids.n.Add(1), 10) }
