package kit

// Request ids (limitspec.Request.ID, docs/semantics.md "Request ids"):
// the reply of a charged request is kept under its request key, in the
// hash tag of the request's first key, and replayed to its retries for
// RequestMs.

// RequestIDMax is the longest request id the scripts take, in bytes.
const RequestIDMax = 128

// RequestMs is how long after a charged decision its reply is replayed
// (the spec's REQUEST_MS); a request key lives RequestMs plus the spec's
// TTL_MARGIN_MS.
const RequestMs = 60000

// CheckRequestID refuses an id the scripts refuse, with their message
// after who (an algorithm's name, or a policy's). The empty id, no id,
// is not checked.
func CheckRequestID(who, id string) error {
	if len(id) > RequestIDMax {
		return BadInput("%s: request id must be 1 to %d bytes, got %d", who, RequestIDMax, len(id))
	}
	return nil
}

// RequestKeyTail is what follows a request key's hash tag: "}:rq:" and
// the id.
func RequestKeyTail(id string) string { return "}:rq:" + id }

// ReusedID refuses a retry whose cost, force or number of limits (a
// policy's; 0 for a limit's request) differ from those its id was
// charged for, with the scripts' message.
func ReusedID(who, id string, cost int64, force bool, limits int) error {
	return BadInput("%s: request id %s was charged for another request (cost:force:limits %d:%s:%d); a retry repeats its request",
		who, Clip(id), cost, ForceArg(force), limits)
}

// Clip is s cut to 32 bytes, "..." after it when cut: a value as the
// scripts' error messages quote it.
func Clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}
