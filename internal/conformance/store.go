package conformance

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// store is a small in-process Redis keyspace for the gopherlua target,
// written here from the Redis command reference and sharing no code with
// miniredis. Its clock is frozen: conformance never lets a key expire, but
// the TTLs scripts set are recorded so that the runner can check them.
type store struct {
	keys map[string]*value
	// work counts the commands run, their arguments (the command's name
	// included: what Redis parses), the elements of the arrays they
	// returned, and the scripts' KEYS and ARGV, so that tests can bound
	// what a script does.
	work struct{ commands, args, returned, inputs int64 }
}

type value struct {
	kind string // "string", "hash", "zset" or "list"
	str  string
	hash map[string]string
	zset map[string]float64 // member → score; never NaN, never -0
	// order caches sorted(); every change to zset clears it.
	order []scored
	list  []string
	ttl   int64 // ms; -1: none
}

// The error texts are Redis's own.
const (
	errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInt    = "ERR value is not an integer or out of range"
	errSyntax    = "ERR syntax error"
	errNotFloat  = "ERR value is not a valid float"
	errRange     = "ERR min or max is not a float"
)

func errArity(cmd string) error {
	return errors.New("ERR wrong number of arguments for '" + strings.ToLower(cmd) + "' command")
}

func newStore() *store { return &store{keys: map[string]*value{}} }

// reply is a command's answer: nil, int64, string, status, []any or error.
type reply = any

// status is a status reply (+OK, TYPE's answer): a script sees it as a
// table whose field ok holds the text.
type status string

// commands maps each supported command to its implementation.
var commands = map[string]func(s *store, args []string) (reply, error){
	"GET":     (*store).get,
	"SET":     (*store).set,
	"DEL":     (*store).del,
	"EXISTS":  (*store).exists,
	"TYPE":    (*store).typ,
	"TIME":    (*store).time,
	"PEXPIRE": (*store).pexpire,
	"PTTL":    (*store).pttl,
	"HGET":    (*store).hget,
	"HMGET":   (*store).hmget,
	"HSET":    (*store).hset,
	"HGETALL": (*store).hgetall,

	"ZADD":             (*store).zadd,
	"ZRANGE":           (*store).zrange,
	"ZRANGEBYSCORE":    (*store).zrangebyscore,
	"ZREVRANGEBYSCORE": (*store).zrevrangebyscore,
	"ZREMRANGEBYSCORE": (*store).zremrangebyscore,
	"ZREMRANGEBYRANK":  (*store).zremrangebyrank,
	"ZREM":             (*store).zrem,
	"ZCARD":            (*store).zcard,
	"ZCOUNT":           (*store).zcount,
	"ZSCORE":           (*store).zscore,

	"RPUSH":  (*store).rpush,
	"LRANGE": (*store).lrange,
	"LLEN":   (*store).llen,
	"LTRIM":  (*store).ltrim,
}

// do runs one command; the name is case-insensitive.
func (s *store) do(cmd string, args []string) (reply, error) {
	f, ok := commands[strings.ToUpper(cmd)]
	if !ok {
		return nil, errors.New("ERR unknown command '" + cmd + "'")
	}
	r, err := f(s, args)
	s.work.commands++
	s.work.args += int64(1 + len(args))
	if a, ok := r.([]any); ok {
		s.work.returned += int64(len(a))
	}
	return r, err
}

// of returns the value at key if it has the wanted kind, nil if absent.
func (s *store) of(key, kind string) (*value, error) {
	v, ok := s.keys[key]
	if !ok {
		return nil, nil
	}
	if v.kind != kind {
		return nil, errors.New(errWrongType)
	}
	return v, nil
}

func (s *store) get(a []string) (reply, error) {
	if len(a) != 1 {
		return nil, errArity("GET")
	}
	v, err := s.of(a[0], "string")
	if v == nil || err != nil {
		return nil, err
	}
	return v.str, nil
}

// set supports SET key value [PX ms].
func (s *store) set(a []string) (reply, error) {
	if len(a) != 2 && len(a) != 4 {
		return nil, errArity("SET")
	}
	v := &value{kind: "string", str: a[1], ttl: -1}
	if len(a) == 4 {
		if !strings.EqualFold(a[2], "PX") {
			return nil, errors.New("ERR syntax error")
		}
		ms, ok := parseInt(a[3])
		if !ok {
			return nil, errors.New(errNotInt)
		}
		if ms <= 0 {
			return nil, errors.New("ERR invalid expire time in 'set' command")
		}
		v.ttl = ms
	}
	s.keys[a[0]] = v
	return status("OK"), nil
}

func (s *store) del(a []string) (reply, error) {
	if len(a) == 0 {
		return nil, errArity("DEL")
	}
	n := int64(0)
	for _, k := range a {
		if _, ok := s.keys[k]; ok {
			delete(s.keys, k)
			n++
		}
	}
	return n, nil
}

func (s *store) exists(a []string) (reply, error) {
	if len(a) == 0 {
		return nil, errArity("EXISTS")
	}
	n := int64(0)
	for _, k := range a {
		if _, ok := s.keys[k]; ok {
			n++
		}
	}
	return n, nil
}

func (s *store) typ(a []string) (reply, error) {
	if len(a) != 1 {
		return nil, errArity("TYPE")
	}
	if v, ok := s.keys[a[0]]; ok {
		return status(v.kind), nil
	}
	return status("none"), nil
}

// time is TIME: the wall clock as seconds and microseconds (only the
// keys' clock is frozen).
func (s *store) time(a []string) (reply, error) {
	if len(a) != 0 {
		return nil, errArity("TIME")
	}
	us := time.Now().UnixMicro()
	return []any{strconv.FormatInt(us/1e6, 10), strconv.FormatInt(us%1e6, 10)}, nil
}

func (s *store) pexpire(a []string) (reply, error) {
	if len(a) != 2 {
		return nil, errArity("PEXPIRE")
	}
	ms, ok := parseInt(a[1])
	if !ok {
		return nil, errors.New(errNotInt)
	}
	v, ok := s.keys[a[0]]
	if !ok {
		return int64(0), nil
	}
	if ms <= 0 { // Redis deletes a key given a TTL that has already passed
		delete(s.keys, a[0])
		return int64(1), nil
	}
	v.ttl = ms
	return int64(1), nil
}

func (s *store) pttl(a []string) (reply, error) {
	if len(a) != 1 {
		return nil, errArity("PTTL")
	}
	v, ok := s.keys[a[0]]
	if !ok {
		return int64(-2), nil
	}
	return v.ttl, nil
}

func (s *store) hget(a []string) (reply, error) {
	if len(a) != 2 {
		return nil, errArity("HGET")
	}
	v, err := s.of(a[0], "hash")
	if v == nil || err != nil {
		return nil, err
	}
	if f, ok := v.hash[a[1]]; ok {
		return f, nil
	}
	return nil, nil
}

func (s *store) hmget(a []string) (reply, error) {
	if len(a) < 2 {
		return nil, errArity("HMGET")
	}
	v, err := s.of(a[0], "hash")
	if err != nil {
		return nil, err
	}
	out := make([]any, len(a)-1)
	for i, f := range a[1:] {
		if v != nil {
			if x, ok := v.hash[f]; ok {
				out[i] = x
			}
		}
	}
	return out, nil
}

func (s *store) hset(a []string) (reply, error) {
	if len(a) < 3 || len(a)%2 != 1 {
		return nil, errArity("HSET")
	}
	v, err := s.of(a[0], "hash")
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = &value{kind: "hash", hash: map[string]string{}, ttl: -1}
		s.keys[a[0]] = v
	}
	added := int64(0)
	for i := 1; i < len(a); i += 2 {
		if _, ok := v.hash[a[i]]; !ok {
			added++
		}
		v.hash[a[i]] = a[i+1]
	}
	return added, nil
}

func (s *store) hgetall(a []string) (reply, error) {
	if len(a) != 1 {
		return nil, errArity("HGETALL")
	}
	v, err := s.of(a[0], "hash")
	if v == nil || err != nil {
		return []any{}, err
	}
	fields := make([]string, 0, len(v.hash))
	for f := range v.hash {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	out := make([]any, 0, 2*len(fields))
	for _, f := range fields {
		out = append(out, f, v.hash[f])
	}
	return out, nil
}

// render is the content of the value at key for (*LuaTarget).Keys: its
// kind, then its contents in a deterministic order: a hash's fields sorted,
// a sorted set's members in Redis's order with their scores, a list's
// elements. It is "" for an absent key.
func (s *store) render(key string) string {
	v, ok := s.keys[key]
	if !ok {
		return ""
	}
	switch v.kind {
	case "hash":
		all, _ := s.hgetall([]string{key})
		return fmt.Sprint(v.kind, all)
	case "zset":
		flat := make([]string, 0, 2*len(v.zset))
		for _, m := range v.sorted() {
			flat = append(flat, m.member, formatScore(m.score))
		}
		return fmt.Sprintf("%s %q", v.kind, flat)
	case "list":
		return fmt.Sprintf("%s %q", v.kind, v.list)
	}
	return v.kind + " " + v.str
}

// parseInt parses an integer argument as Redis's string2ll does: an
// optional '-' and digits, without '+', spaces, leading zeros or "-0".
func parseInt(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	d := strings.TrimPrefix(s, "-")
	if d == "" || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	for i := 1; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// strtod parses the whole of s as C's strtod would a number with nothing
// after it: decimal or hexadecimal (0x, with or without a 'p' exponent),
// inf, infinity or nan in any case, with an optional sign. overflow and
// underflow report a result that strtod gives with ERANGE (±Inf, 0).
func strtod(s string) (f float64, ok, overflow, underflow bool) {
	if strings.ContainsRune(s, '_') { // Go's ParseFloat allows some; C none
		return 0, false, false, false
	}
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	hex := len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	mant := body
	if hex {
		mant = body[2:]
		if i := strings.IndexAny(mant, "pP"); i >= 0 {
			mant = mant[:i]
		} else {
			s += "p0" // Go requires the binary exponent; C does not
		}
	} else if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
			return f, true, true, false
		}
		return 0, false, false, false
	}
	if f == 0 && !math.IsNaN(f) {
		nonzero := "123456789"
		if hex {
			nonzero += "abcdefABCDEF"
		}
		underflow = strings.ContainsAny(mant, nonzero)
	}
	return f, true, false, underflow
}

// parseScore parses a ZADD score as Redis's string2d: the whole string, no
// leading space, neither NaN nor out of range.
func parseScore(s string) (float64, bool) {
	if s == "" || isSpace(s[0]) {
		return 0, false
	}
	f, ok, over, under := strtod(s)
	if !ok || over || under || math.IsNaN(f) {
		return 0, false
	}
	return f + 0, true // Redis keeps a small set's integral scores as integers: -0 becomes 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// scoreRange is a score interval, each end inclusive or exclusive.
type scoreRange struct {
	min, max     float64
	minEx, maxEx bool
}

func (r scoreRange) has(x float64) bool {
	return (x > r.min || !r.minEx && x == r.min) && (x < r.max || !r.maxEx && x == r.max)
}

// parseRange parses min and max as Redis's zslParseRange: a leading '('
// makes an end exclusive; then strtod, which skips leading spaces, reads
// "" as 0 and out-of-range values as ±Inf or 0; NaN is refused.
func parseRange(min, max string) (scoreRange, error) {
	var r scoreRange
	var ok1, ok2 bool
	r.min, r.minEx, ok1 = parseBound(min)
	r.max, r.maxEx, ok2 = parseBound(max)
	if !ok1 || !ok2 {
		return r, errors.New(errRange)
	}
	return r, nil
}

func parseBound(s string) (f float64, ex, ok bool) {
	if strings.HasPrefix(s, "(") {
		s, ex = s[1:], true
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" { // no conversion: strtod's end is s itself
		return 0, ex, s == ""
	}
	f, ok, _, _ = strtod(t)
	if !ok || math.IsNaN(f) {
		return 0, ex, false
	}
	return f, ex, true
}

// formatScore renders a score as Redis 7.0's RESP2 double reply does:
// printf's %.17g, and inf or -inf.
func formatScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64) // the same text as C's %.17g
}

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

// span applies Redis's LRANGE/ZRANGE/LTRIM index rules to a sequence of n:
// negative indexes count from the end; ok is false for an empty range.
func span(start, stop int64, n int) (from, to int, ok bool) {
	l := int64(n)
	if start < 0 {
		start += l
	}
	if stop < 0 {
		stop += l
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= l {
		return 0, 0, false
	}
	if stop >= l {
		stop = l - 1
	}
	return int(start), int(stop), true
}

// zadd supports ZADD key score member [score member ...], without flags.
func (s *store) zadd(a []string) (reply, error) {
	if len(a) < 3 {
		return nil, errArity("ZADD")
	}
	switch strings.ToUpper(a[1]) {
	case "NX", "XX", "GT", "LT", "CH", "INCR":
		return nil, errors.New("ERR this store does not support ZADD " + strings.ToUpper(a[1]))
	}
	if len(a)%2 != 1 {
		return nil, errors.New(errSyntax)
	}
	scores := make([]float64, 0, len(a)/2)
	for i := 1; i < len(a); i += 2 {
		f, ok := parseScore(a[i])
		if !ok {
			return nil, errors.New(errNotFloat)
		}
		scores = append(scores, f)
	}
	v, err := s.of(a[0], "zset")
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = &value{kind: "zset", zset: map[string]float64{}, ttl: -1}
		s.keys[a[0]] = v
	}
	added := int64(0)
	for i, f := range scores {
		m := a[2+2*i]
		if _, ok := v.zset[m]; !ok {
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

// zrange supports ZRANGE key start stop [WITHSCORES]: the index form.
func (s *store) zrange(a []string) (reply, error) {
	if len(a) < 3 {
		return nil, errArity("ZRANGE")
	}
	scores, limit, unsupported := false, int64(-1), ""
	for i := 3; i < len(a); i++ {
		switch opt := strings.ToUpper(a[i]); {
		case opt == "WITHSCORES":
			scores = true
		case opt == "LIMIT" && len(a)-i-1 >= 2:
			_, ok1 := parseInt(a[i+1])
			n, ok2 := parseInt(a[i+2])
			if !ok1 || !ok2 {
				return nil, errors.New(errNotInt)
			}
			limit = n
			i += 2
		case opt == "REV" || opt == "BYSCORE" || opt == "BYLEX":
			if unsupported == "" {
				unsupported = opt
			}
		default:
			return nil, errors.New(errSyntax)
		}
	}
	if unsupported != "" {
		return nil, errors.New("ERR this store does not support ZRANGE " + unsupported)
	}
	if limit != -1 { // Redis's own check: -1 is its "no LIMIT"
		return nil, errors.New("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
	}
	start, ok1 := parseInt(a[1])
	stop, ok2 := parseInt(a[2])
	if !ok1 || !ok2 {
		return nil, errors.New(errNotInt)
	}
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return []any{}, err
	}
	ms := v.sorted()
	from, to, ok := span(start, stop, len(ms))
	if !ok {
		return []any{}, nil
	}
	return withScores(ms[from:to+1], scores), nil
}

// zrangebyscore supports ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count].
func (s *store) zrangebyscore(a []string) (reply, error) { return s.byScore(a, false) }

// zrevrangebyscore supports ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]:
// the same members, highest score (then member) first.
func (s *store) zrevrangebyscore(a []string) (reply, error) { return s.byScore(a, true) }

func (s *store) byScore(a []string, rev bool) (reply, error) {
	if len(a) < 3 {
		if rev {
			return nil, errArity("ZREVRANGEBYSCORE")
		}
		return nil, errArity("ZRANGEBYSCORE")
	}
	scores, offset, limit := false, int64(0), int64(-1)
	for i := 3; i < len(a); i++ {
		switch opt := strings.ToUpper(a[i]); {
		case opt == "WITHSCORES":
			scores = true
		case opt == "LIMIT" && len(a)-i-1 >= 2:
			o, ok1 := parseInt(a[i+1])
			n, ok2 := parseInt(a[i+2])
			if !ok1 || !ok2 {
				return nil, errors.New(errNotInt)
			}
			offset, limit = o, n
			i += 2
		default:
			return nil, errors.New(errSyntax)
		}
	}
	lo, hi := a[1], a[2]
	if rev {
		lo, hi = hi, lo
	}
	r, err := parseRange(lo, hi)
	if err != nil {
		return nil, err
	}
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return []any{}, err
	}
	var in []scored
	for _, m := range v.sorted() {
		if r.has(m.score) {
			in = append(in, m)
		}
	}
	if rev {
		slices.Reverse(in)
	}
	// Redis skips offset members (all of them for a negative offset), then
	// returns up to limit (all the rest for a negative limit).
	if offset < 0 || offset >= int64(len(in)) {
		return []any{}, nil
	}
	in = in[offset:]
	if limit >= 0 && limit < int64(len(in)) {
		in = in[:limit]
	}
	return withScores(in, scores), nil
}

func (s *store) zremrangebyscore(a []string) (reply, error) {
	if len(a) != 3 {
		return nil, errArity("ZREMRANGEBYSCORE")
	}
	r, err := parseRange(a[1], a[2])
	if err != nil {
		return nil, err
	}
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return int64(0), err
	}
	n := int64(0)
	for m, sc := range v.zset {
		if r.has(sc) {
			delete(v.zset, m)
			v.order = nil
			n++
		}
	}
	s.dropIfEmpty(a[0], v)
	return n, nil
}

// dropIfEmpty removes a sorted set whose last member was removed, as
// Redis does.
func (s *store) dropIfEmpty(key string, v *value) {
	if len(v.zset) == 0 {
		delete(s.keys, key)
	}
}

// zremrangebyrank supports ZREMRANGEBYRANK key start stop, ranks as
// ZRANGE takes them.
func (s *store) zremrangebyrank(a []string) (reply, error) {
	if len(a) != 3 {
		return nil, errArity("ZREMRANGEBYRANK")
	}
	start, ok1 := parseInt(a[1])
	stop, ok2 := parseInt(a[2])
	if !ok1 || !ok2 {
		return nil, errors.New(errNotInt)
	}
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return int64(0), err
	}
	ms := v.sorted()
	from, to, ok := span(start, stop, len(ms))
	if !ok {
		return int64(0), nil
	}
	for _, m := range ms[from : to+1] {
		delete(v.zset, m.member)
		v.order = nil
	}
	s.dropIfEmpty(a[0], v)
	return int64(to - from + 1), nil
}

// zrem supports ZREM key member [member ...].
func (s *store) zrem(a []string) (reply, error) {
	if len(a) < 2 {
		return nil, errArity("ZREM")
	}
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return int64(0), err
	}
	n := int64(0)
	for _, m := range a[1:] {
		if _, ok := v.zset[m]; ok {
			delete(v.zset, m)
			v.order = nil
			n++
		}
	}
	s.dropIfEmpty(a[0], v)
	return n, nil
}

func (s *store) zcard(a []string) (reply, error) {
	if len(a) != 1 {
		return nil, errArity("ZCARD")
	}
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return int64(0), err
	}
	return int64(len(v.zset)), nil
}

func (s *store) zcount(a []string) (reply, error) {
	if len(a) != 3 {
		return nil, errArity("ZCOUNT")
	}
	r, err := parseRange(a[1], a[2])
	if err != nil {
		return nil, err
	}
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return int64(0), err
	}
	n := int64(0)
	for _, sc := range v.zset {
		if r.has(sc) {
			n++
		}
	}
	return n, nil
}

func (s *store) zscore(a []string) (reply, error) {
	if len(a) != 2 {
		return nil, errArity("ZSCORE")
	}
	v, err := s.of(a[0], "zset")
	if v == nil || err != nil {
		return nil, err
	}
	if sc, ok := v.zset[a[1]]; ok {
		return formatScore(sc), nil
	}
	return nil, nil
}

func (s *store) rpush(a []string) (reply, error) {
	if len(a) < 2 {
		return nil, errArity("RPUSH")
	}
	v, err := s.of(a[0], "list")
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = &value{kind: "list", ttl: -1}
		s.keys[a[0]] = v
	}
	v.list = append(v.list, a[1:]...)
	return int64(len(v.list)), nil
}

func (s *store) lrange(a []string) (reply, error) {
	if len(a) != 3 {
		return nil, errArity("LRANGE")
	}
	start, ok1 := parseInt(a[1])
	stop, ok2 := parseInt(a[2])
	if !ok1 || !ok2 {
		return nil, errors.New(errNotInt)
	}
	v, err := s.of(a[0], "list")
	if v == nil || err != nil {
		return []any{}, err
	}
	from, to, ok := span(start, stop, len(v.list))
	if !ok {
		return []any{}, nil
	}
	out := make([]any, 0, to-from+1)
	for _, e := range v.list[from : to+1] {
		out = append(out, e)
	}
	return out, nil
}

func (s *store) llen(a []string) (reply, error) {
	if len(a) != 1 {
		return nil, errArity("LLEN")
	}
	v, err := s.of(a[0], "list")
	if v == nil || err != nil {
		return int64(0), err
	}
	return int64(len(v.list)), nil
}

func (s *store) ltrim(a []string) (reply, error) {
	if len(a) != 3 {
		return nil, errArity("LTRIM")
	}
	start, ok1 := parseInt(a[1])
	stop, ok2 := parseInt(a[2])
	if !ok1 || !ok2 {
		return nil, errors.New(errNotInt)
	}
	v, err := s.of(a[0], "list")
	if err != nil {
		return nil, err
	}
	if v == nil {
		return status("OK"), nil
	}
	from, to, ok := span(start, stop, len(v.list))
	if !ok { // Redis removes an emptied list
		delete(s.keys, a[0])
		return status("OK"), nil
	}
	v.list = append([]string(nil), v.list[from:to+1]...)
	return status("OK"), nil
}
