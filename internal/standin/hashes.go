package standin

import "sort"

// The hash commands: the scripts keep no state in hashes, but conformance
// plants one (HSET) where a script's state belongs, to check that the
// script refuses a key of the wrong type.

func (s *Store) hget(a []string) (Reply, error) {
	v, err := s.of(a[0], "hash")
	if v == nil || err != nil {
		return nil, err
	}
	if f, found := v.hash[a[1]]; found {
		return f, nil
	}
	return nil, nil
}

func (s *Store) hmget(a []string) (Reply, error) {
	v, err := s.of(a[0], "hash")
	if err != nil {
		return nil, err
	}
	out := make([]any, len(a)-1)
	for i, f := range a[1:] {
		if x, found := v.field(f); found {
			out[i] = x
		}
	}
	return out, nil
}

// field is a hash's field; a nil hash (an absent key) has none.
func (v *value) field(f string) (string, bool) {
	if v == nil {
		return "", false
	}
	x, found := v.hash[f]
	return x, found
}

// hset supports HSET key field value [field value ...].
func (s *Store) hset(a []string) (Reply, error) {
	if len(a)%2 != 1 {
		return nil, errArity("HSET")
	}
	v, err := s.create(a[0], "hash")
	if err != nil {
		return nil, err
	}
	added := int64(0)
	for i := 1; i < len(a); i += 2 {
		if _, found := v.hash[a[i]]; !found {
			added++
		}
		v.hash[a[i]] = a[i+1]
	}
	return added, nil
}

// hgetall is HGETALL, its fields sorted (Redis promises no order).
func (s *Store) hgetall(a []string) (Reply, error) {
	v, err := s.of(a[0], "hash")
	if v == nil || err != nil {
		return []any{}, err
	}
	return v.pairs(), nil
}

// pairs is a hash's fields and values, by field.
func (v *value) pairs() []any {
	fields := make([]string, 0, len(v.hash))
	for f := range v.hash {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	out := make([]any, 0, 2*len(fields))
	for _, f := range fields {
		out = append(out, f, v.hash[f])
	}
	return out
}

func (s *Store) hdel(a []string) (Reply, error) {
	v, err := s.of(a[0], "hash")
	if v == nil || err != nil {
		return int64(0), err
	}
	n := int64(0)
	for _, f := range a[1:] {
		if _, ok := v.hash[f]; ok {
			delete(v.hash, f)
			n++
		}
	}
	s.dropIfEmpty(a[0], v)
	return n, nil
}
