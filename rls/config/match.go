package config

import "strings"

// Match finds the limit of a descriptor of domain, as the reference's
// GetLimit does for a descriptor without a limit of its own. From the
// domain down, each entry matches, among the descriptors of its level,
// the one of its key and value; else the first wildcard of the level
// (in file order) whose composite key, key_prefix*, the entry's
// key_value begins with (key_prefix); else the one of its key alone. The
// walk stops at an entry that matches none, or at a descriptor without
// nested descriptors; the limit applies only if the last entry is
// reached and its descriptor has a rate_limit. An unknown domain, or no
// entries, is not limited.
//
// Match allocates nothing when no limit applies, and only the Tag when
// one does (but for an entry whose key and value pass 250 bytes).
func (c *Config) Match(domain string, entries []Entry) Match {
	if c == nil || len(entries) == 0 {
		return Match{}
	}
	n := c.domains[domain]
	if n == nil {
		return Match{}
	}
	var buf [256]byte // the composite key of an entry, built here unless longer
	var few [8]string
	var shared []string // by entry: the share_threshold wildcard it matched, or ""
	var found *RateLimit
	for i, e := range entries {
		k := append(append(append(buf[:0], e.Key...), '_'), e.Value...)
		next := n.children[string(k)]
		byWildcard := false
		if next == nil {
			next = n.wildcard(k)
			byWildcard = next != nil
		}
		if next == nil {
			next = n.children[e.Key]
		}
		if next == nil {
			break
		}
		if byWildcard && next.share {
			if shared == nil {
				shared = few[:]
				if len(entries) > len(few) {
					shared = make([]string, len(entries))
				}
			}
			shared[i] = valuePart(next.key, e.Key)
		}
		if i == len(entries)-1 {
			found = next.limit
		}
		if len(next.children) == 0 {
			break
		}
		n = next
	}
	if found == nil {
		return Match{}
	}
	return Match{Limit: found, Tag: tagOf(domain, entries, shared)}
}

// wildcard returns the first of n's wildcards whose composite key less
// its '*' begins k, nil if none does.
func (n *node) wildcard(k []byte) *node {
	for _, w := range n.wildcards {
		prefix := w.key[:len(w.key)-1]
		if len(k) >= len(prefix) && string(k[:len(prefix)]) == prefix {
			return w
		}
	}
	return nil
}

// valuePart is a wildcard's composite key less the entry's key and '_'
// (the value pattern, "files/*" of "files_files/*"), or all of it if it
// does not begin so (as the reference trims it).
func valuePart(composite, key string) string {
	if len(composite) > len(key) && composite[:len(key)] == key && composite[len(key)] == '_' {
		return composite[len(key)+1:]
	}
	return composite
}

// Tag names the counter of a descriptor of domain with entries as the
// reference's cache key does, less its prefix and window:
// "domain_k1_v1_k2_v2_". Match's Tag is this, but for the entries a
// share_threshold wildcard matched; a descriptor that carries its own
// limit (Override) counts under this.
func Tag(domain string, entries []Entry) string { return tagOf(domain, entries, nil) }

// tagOf is Tag, the value of entry i being shared[i] where that is not
// "": the share_threshold wildcard the entry matched (shared is nil when
// none did).
func tagOf(domain string, entries []Entry, shared []string) string {
	value := func(i int) string {
		if shared != nil && shared[i] != "" {
			return shared[i]
		}
		return entries[i].Value
	}
	size := len(domain) + 1
	for i, e := range entries {
		size += len(e.Key) + len(value(i)) + 2
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(domain)
	b.WriteByte('_')
	for i, e := range entries {
		b.WriteString(e.Key)
		b.WriteByte('_')
		b.WriteString(value(i))
		b.WriteByte('_')
	}
	return b.String()
}
