package limitcall

// RequestKeyTail is what follows a request key's hash tag: "}:rq:" and
// the id. A request key, {tag}:rq:<id> in the hash tag of the call's
// first key, keeps the reply of a charged request for its retries
// (docs/semantics.md, "Request ids").
func RequestKeyTail(id string) string { return "}:rq:" + id }
