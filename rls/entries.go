package rls

import (
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
)

// The descriptor entries of ours (docs/rls.md): the operation on a hold
// the request is (its op, its id, and, for a reserve or renew, how long
// it holds in ms), and the forced charge of work already done. They may
// be in any of the request's descriptors (Envoy appends an action's
// entry to its rate limit's descriptor), must agree where repeated, and
// are not matched against the configuration.
const (
	HoldEntry   = "limitspec.hold"
	HoldIDEntry = "limitspec.hold_id"
	HoldMsEntry = "limitspec.hold_ms"
	// ForceEntry "true" charges every descriptor's cost even past its
	// limit (docs/semantics.md, "Force"): what Envoy's
	// apply_on_stream_done charges at the end of a stream was spent.
	ForceEntry = "limitspec.force"
)

// isOurEntry reports whether key is one of our entries.
func isOurEntry(key string) bool {
	return key == HoldEntry || key == HoldIDEntry || key == HoldMsEntry || key == ForceEntry
}

// ourEntries reads our entries of the descriptors ds, by key, refusing
// two that disagree.
func ourEntries(ds []*ratelimitv3.RateLimitDescriptor) (map[string]string, error) {
	var seen map[string]string
	for _, d := range ds {
		for _, e := range d.GetEntries() {
			if !isOurEntry(e.GetKey()) {
				continue
			}
			if seen == nil {
				seen = map[string]string{}
			}
			if v, had := seen[e.GetKey()]; had && v != e.GetValue() {
				return nil, badRequestf("%s is %q in one descriptor and %q in another", e.GetKey(), v, e.GetValue())
			}
			seen[e.GetKey()] = e.GetValue()
		}
	}
	return seen, nil
}

// forceOf reports whether our entries (seen) ask for a forced charge.
func forceOf(seen map[string]string) (bool, error) {
	v, given := seen[ForceEntry]
	switch {
	case !given:
		return false, nil
	case v != "true":
		return false, badRequestf("%s must be \"true\", got %q", ForceEntry, v)
	case seen[HoldEntry] != "":
		return false, badRequestf("%s and %s do not go together: a hold's commit is the charge of work done", ForceEntry, HoldEntry)
	}
	return true, nil
}
