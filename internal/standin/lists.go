package standin

// The list commands.

func (s *Store) rpush(a []string) (Reply, error) {
	v, err := s.create(a[0], "list")
	if err != nil {
		return nil, err
	}
	v.list = append(v.list, a[1:]...)
	return int64(len(v.list)), nil
}

// listRange parses LRANGE's and LTRIM's start and stop and returns the
// list at key (nil if absent) and the range of its elements they name.
func (s *Store) listRange(a []string) (v *value, from, to int, ok bool, err error) {
	start, stop, err := parseIndexes(a[1], a[2])
	if err != nil {
		return nil, 0, 0, false, err
	}
	v, err = s.of(a[0], "list")
	if v == nil || err != nil {
		return nil, 0, 0, false, err
	}
	from, to, ok = span(start, stop, len(v.list))
	return v, from, to, ok, nil
}

func (s *Store) lrange(a []string) (Reply, error) {
	v, from, to, ok, err := s.listRange(a)
	if err != nil {
		return nil, err
	}
	if !ok {
		return []any{}, nil
	}
	out := make([]any, 0, to-from+1)
	for _, e := range v.list[from : to+1] {
		out = append(out, e)
	}
	return out, nil
}

// lindex is LINDEX: the element at an index (negative from the end), or
// nil.
func (s *Store) lindex(a []string) (Reply, error) {
	i, err := parseInt(a[1])
	if err != nil {
		return nil, errNotInt
	}
	v, err := s.of(a[0], "list")
	if v == nil || err != nil {
		return nil, err
	}
	if i < 0 {
		i += int64(len(v.list))
	}
	if i < 0 || i >= int64(len(v.list)) {
		return nil, nil
	}
	return v.list[i], nil
}

func (s *Store) llen(a []string) (Reply, error) { return s.size(a[0], "list") }

// ltrim is LTRIM; a list trimmed to nothing is removed.
func (s *Store) ltrim(a []string) (Reply, error) {
	v, from, to, ok, err := s.listRange(a)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return statusOK, nil
	}
	if ok {
		v.list = append([]string(nil), v.list[from:to+1]...)
	} else {
		v.list = nil
	}
	s.dropIfEmpty(a[0], v)
	return statusOK, nil
}
