package standin

import (
	"slices"
	"sort"
	"strings"
)

// The sorted set commands.

type scored struct {
	member string
	score  float64
}

// sorted lists a sorted set's members by score, then by member bytes.
func (v *value) sorted() []scored {
	if v.order != nil {
		return v.order
	}
	out := make([]scored, 0, len(v.zset))
	for m, sc := range v.zset {
		out = append(out, scored{m, sc})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score < out[j].score
		}
		return out[i].member < out[j].member
	})
	v.order = out
	return out
}

// zadd supports ZADD key score member [score member ...], without flags.
func (s *Store) zadd(a []string) (Reply, error) {
	switch opt := strings.ToUpper(a[1]); opt {
	case "NX", "XX", "GT", "LT", "CH", "INCR":
		return nil, errUnsupported("ZADD", opt)
	}
	if len(a)%2 != 1 {
		return nil, errSyntax
	}
	scores := make([]float64, 0, len(a)/2)
	for i := 1; i < len(a); i += 2 {
		f, err := parseScore(a[i])
		if err != nil {
			return nil, err
		}
		scores = append(scores, f)
	}
	v, err := s.create(a[0], "zset")
	if err != nil {
		return nil, err
	}
	added := int64(0)
	for i, f := range scores {
		m := a[2+2*i]
		if _, found := v.zset[m]; !found {
			added++
		}
		v.zset[m] = f
		v.order = nil
	}
	return added, nil
}

func withScores(ms []scored, scores bool) []any {
	out := make([]any, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.member)
		if scores {
			out = append(out, formatScore(m.score))
		}
	}
	return out
}

// rankRange parses ZRANGE's and ZREMRANGEBYRANK's start and stop and
// returns the sorted set at key (nil if absent) and its members they
// name, by rank.
func (s *Store) rankRange(a []string) (*value, []scored, error) {
	start, stop, err := parseIndexes(a[1], a[2])
	if err != nil {
		return nil, nil, err
	}
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return nil, nil, err
	}
	ms := v.sorted()
	from, to, ok := span(start, stop, len(ms))
	if !ok {
		return v, nil, nil
	}
	return v, ms[from : to+1], nil
}

// scoreRange parses min and max and returns the sorted set at key (nil
// if absent) and its members in that range, by score.
func (s *Store) scoreRange(key, min, max string) (*value, []scored, error) {
	r, err := parseRange(min, max)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.of(key, "zset")
	if v == nil || err != nil {
		return nil, nil, err
	}
	var in []scored
	for _, m := range v.sorted() {
		if r.has(m.score) {
			in = append(in, m)
		}
	}
	return v, in, nil
}

// zrange supports ZRANGE key start stop [WITHSCORES]: the index form.
func (s *Store) zrange(a []string) (Reply, error) {
	o, err := parseRangeOptions(a[3:], "REV", "BYSCORE", "BYLEX")
	switch {
	case err != nil:
		return nil, err
	case o.other != "":
		return nil, errUnsupported("ZRANGE", o.other)
	case o.count != -1:
		return nil, errLimitAlone
	}
	_, in, err := s.rankRange(a)
	if err != nil {
		return nil, err
	}
	return withScores(in, o.withScores), nil
}

// zrangebyscore supports ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count].
func (s *Store) zrangebyscore(a []string) (Reply, error) { return s.byScore(a, false) }

// zrevrangebyscore supports ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]:
// the same members, highest score (then member) first.
func (s *Store) zrevrangebyscore(a []string) (Reply, error) { return s.byScore(a, true) }

func (s *Store) byScore(a []string, rev bool) (Reply, error) {
	o, err := parseRangeOptions(a[3:])
	if err != nil {
		return nil, err
	}
	lo, hi := a[1], a[2]
	if rev {
		lo, hi = hi, lo
	}
	_, in, err := s.scoreRange(a[0], lo, hi)
	if err != nil {
		return nil, err
	}
	if rev {
		slices.Reverse(in)
	}
	// Redis skips offset members (all of them for a negative offset), then
	// returns up to count (all the rest for a negative count).
	if o.offset < 0 || o.offset >= int64(len(in)) {
		return []any{}, nil
	}
	in = in[o.offset:]
	if o.count >= 0 && o.count < int64(len(in)) {
		in = in[:o.count]
	}
	return withScores(in, o.withScores), nil
}

func (s *Store) zremrangebyscore(a []string) (Reply, error) {
	v, in, err := s.scoreRange(a[0], a[1], a[2])
	if v == nil || err != nil {
		return int64(0), err
	}
	return s.remove(a[0], v, members(in)...), nil
}

// zremrangebyrank supports ZREMRANGEBYRANK key start stop, ranks as
// ZRANGE takes them.
func (s *Store) zremrangebyrank(a []string) (Reply, error) {
	v, in, err := s.rankRange(a)
	if v == nil || err != nil {
		return int64(0), err
	}
	return s.remove(a[0], v, members(in)...), nil
}

// zrem supports ZREM key member [member ...].
func (s *Store) zrem(a []string) (Reply, error) {
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return int64(0), err
	}
	return s.remove(a[0], v, a[1:]...), nil
}

func members(ms []scored) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.member
	}
	return out
}

// remove removes members from the sorted set v at key, and the key if
// none is left; it returns how many were there.
func (s *Store) remove(key string, v *value, members ...string) int64 {
	n := int64(0)
	for _, m := range members {
		if _, found := v.zset[m]; found {
			delete(v.zset, m)
			n++
		}
	}
	v.order = nil
	s.dropIfEmpty(key, v)
	return n
}

func (s *Store) zcard(a []string) (Reply, error) { return s.size(a[0], "zset") }

func (s *Store) zcount(a []string) (Reply, error) {
	_, in, err := s.scoreRange(a[0], a[1], a[2])
	if err != nil {
		return nil, err
	}
	return int64(len(in)), nil
}

func (s *Store) zscore(a []string) (Reply, error) {
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return nil, err
	}
	if sc, found := v.zset[a[1]]; found {
		return formatScore(sc), nil
	}
	return nil, nil
}

func (s *Store) zmscore(a []string) (Reply, error) {
	v, err := s.of(a[0], "zset")
	if err != nil {
		return nil, err
	}
	out := make([]any, len(a)-1)
	for i, m := range a[1:] {
		if v == nil {
			continue
		}
		if sc, found := v.zset[m]; found {
			out[i] = formatScore(sc)
		}
	}
	return out, nil
}
