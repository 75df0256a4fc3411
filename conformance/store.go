package conformance

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// store is a small in-process Redis keyspace for the gopherlua target,
// written here from the Redis command reference and sharing no code with
// miniredis. Its clock is frozen: conformance never lets a key expire, but
// the TTLs scripts set are recorded so that the runner can check them.
type store struct {
	keys map[string]*value
}

type value struct {
	kind string // "string" or "hash"
	str  string
	hash map[string]string
	ttl  int64 // ms; -1: none
}

// The error texts are Redis's own.
const (
	errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInt    = "ERR value is not an integer or out of range"
)

func errArity(cmd string) error {
	return errors.New("ERR wrong number of arguments for '" + strings.ToLower(cmd) + "' command")
}

func newStore() *store { return &store{keys: map[string]*value{}} }

// reply is a command's answer: nil, int64, string, []any or error.
type reply = any

// commands maps each supported command to its implementation.
var commands = map[string]func(s *store, args []string) (reply, error){
	"GET":     (*store).get,
	"SET":     (*store).set,
	"DEL":     (*store).del,
	"EXISTS":  (*store).exists,
	"TYPE":    (*store).typ,
	"PEXPIRE": (*store).pexpire,
	"PTTL":    (*store).pttl,
	"HGET":    (*store).hget,
	"HMGET":   (*store).hmget,
	"HSET":    (*store).hset,
	"HDEL":    (*store).hdel,
	"HGETALL": (*store).hgetall,
}

// do runs one command; the name is case-insensitive.
func (s *store) do(cmd string, args []string) (reply, error) {
	f, ok := commands[strings.ToUpper(cmd)]
	if !ok {
		return nil, errors.New("ERR unknown command '" + cmd + "'")
	}
	return f(s, args)
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
		ms, err := strconv.ParseInt(a[3], 10, 64)
		if err != nil || ms <= 0 {
			return nil, errors.New("ERR invalid expire time in 'set' command")
		}
		v.ttl = ms
	}
	s.keys[a[0]] = v
	return "OK", nil
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
		return v.kind, nil
	}
	return "none", nil
}

func (s *store) pexpire(a []string) (reply, error) {
	if len(a) != 2 {
		return nil, errArity("PEXPIRE")
	}
	ms, err := strconv.ParseInt(a[1], 10, 64)
	if err != nil {
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

func (s *store) hdel(a []string) (reply, error) {
	if len(a) < 2 {
		return nil, errArity("HDEL")
	}
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
	if len(v.hash) == 0 { // Redis removes an emptied hash
		delete(s.keys, a[0])
	}
	return n, nil
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
