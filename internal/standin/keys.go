package standin

// The keyspace commands.

func (s *Store) del(a []string) (Reply, error) {
	n := int64(0)
	for _, k := range a {
		if _, found := s.keys[k]; found {
			delete(s.keys, k)
			n++
		}
	}
	return n, nil
}

func (s *Store) exists(a []string) (Reply, error) {
	n := int64(0)
	for _, k := range a {
		if _, found := s.keys[k]; found {
			n++
		}
	}
	return n, nil
}

func (s *Store) typ(a []string) (Reply, error) {
	if v, found := s.keys[a[0]]; found {
		return Status(v.kind), nil
	}
	return Status("none"), nil
}

// pexpire supports PEXPIRE key ms, without the options NX, XX, GT, LT.
func (s *Store) pexpire(a []string) (Reply, error) {
	if len(a) > 2 {
		return nil, errUnsupported("PEXPIRE", a[2])
	}
	ms, err := parseInt(a[1])
	if err != nil {
		return nil, err
	}
	v, found := s.keys[a[0]]
	if !found {
		return int64(0), nil
	}
	if ms <= 0 { // Redis deletes a key given a TTL that has already passed
		delete(s.keys, a[0])
		return int64(1), nil
	}
	v.ttl = ms
	return int64(1), nil
}

// pttl is PTTL: the key's TTL, -1 without one, -2 for an absent key.
func (s *Store) pttl(a []string) (Reply, error) {
	v, found := s.keys[a[0]]
	if !found {
		return int64(-2), nil
	}
	return v.ttl, nil
}

// size is LLEN's and ZCARD's answer: the elements of the value of kind
// at key, 0 if absent.
func (s *Store) size(key, kind string) (Reply, error) {
	v, err := s.of(key, kind)
	if v == nil || err != nil {
		return int64(0), err
	}
	return int64(len(v.list) + len(v.zset)), nil
}

// dropIfEmpty removes a sorted set, a list or a hash whose last element
// was removed, as Redis does.
func (s *Store) dropIfEmpty(key string, v *value) {
	if len(v.zset) == 0 && len(v.list) == 0 && len(v.hash) == 0 {
		delete(s.keys, key)
	}
}
