package standin

import (
	"fmt"
	"sort"
	"strings"
)

// Store is one keyspace.
type Store struct {
	keys map[string]*value
	work Work
}

// Work counts what the commands run on a store did, so that tests can
// bound what a script does.
type Work struct {
	// Commands is the number of commands run, Args their arguments with
	// the command's name (what Redis parses), Returned the elements of
	// the arrays they returned.
	Commands, Args, Returned int64
}

// value is the value at one key.
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

// Reply is a command's answer as a script sees it: nil, int64, string,
// Status or []any of those.
type Reply = any

// Status is a status reply (+OK, TYPE's answer): a script sees it as a
// table whose field ok holds the text.
type Status string

// statusOK is the status reply OK.
const statusOK = Status("OK")

// New returns an empty store.
func New() *Store { return &Store{keys: map[string]*value{}} }

// command is one command: its arity as Redis's command table gives it,
// counting the command's name (n: exactly n; -n: at least n), and its
// implementation, given the arguments after the name.
type command struct {
	arity int
	run   func(s *Store, args []string) (Reply, error)
}

// commands maps each supported command to its implementation.
var commands = map[string]command{
	"DEL":     {-2, (*Store).del},
	"EXISTS":  {-2, (*Store).exists},
	"TYPE":    {2, (*Store).typ},
	"PEXPIRE": {-3, (*Store).pexpire},
	"PTTL":    {2, (*Store).pttl},

	"GET":    {2, (*Store).get},
	"SET":    {-3, (*Store).set},
	"PSETEX": {4, (*Store).psetex},

	"HGET":    {3, (*Store).hget},
	"HMGET":   {-3, (*Store).hmget},
	"HSET":    {-4, (*Store).hset},
	"HDEL":    {-3, (*Store).hdel},
	"HGETALL": {2, (*Store).hgetall},

	"ZADD":             {-4, (*Store).zadd},
	"ZRANGE":           {-4, (*Store).zrange},
	"ZRANGEBYSCORE":    {-4, (*Store).zrangebyscore},
	"ZREVRANGEBYSCORE": {-4, (*Store).zrevrangebyscore},
	"ZREMRANGEBYSCORE": {4, (*Store).zremrangebyscore},
	"ZREMRANGEBYRANK":  {4, (*Store).zremrangebyrank},
	"ZREM":             {-3, (*Store).zrem},
	"ZCARD":            {2, (*Store).zcard},
	"ZCOUNT":           {4, (*Store).zcount},
	"ZSCORE":           {3, (*Store).zscore},
	"ZMSCORE":          {-3, (*Store).zmscore},

	"RPUSH":  {-3, (*Store).rpush},
	"LRANGE": {4, (*Store).lrange},
	"LINDEX": {3, (*Store).lindex},
	"LLEN":   {2, (*Store).llen},
	"LTRIM":  {4, (*Store).ltrim},

	"TIME": {1, (*Store).time},
}

// Do runs one command, its name in any case, and counts its work.
func (s *Store) Do(cmd string, args []string) (Reply, error) {
	c, known := commands[strings.ToUpper(cmd)]
	if !known {
		return nil, errUnknown(cmd)
	}
	s.work.Commands++
	s.work.Args += int64(1 + len(args))
	if n := 1 + len(args); c.arity >= 0 && n != c.arity || n < -c.arity {
		return nil, errArity(cmd)
	}
	r, err := c.run(s, args)
	if a, isArray := r.([]any); isArray {
		s.work.Returned += int64(len(a))
	}
	return r, err
}

// Work returns the work of every command run so far.
func (s *Store) Work() Work { return s.work }

// of returns the value at key if it has the wanted kind, nil if absent.
func (s *Store) of(key, kind string) (*value, error) {
	v, found := s.keys[key]
	if !found {
		return nil, nil
	}
	if v.kind != kind {
		return nil, errWrongType
	}
	return v, nil
}

// create returns the value at key of the wanted kind, a new empty one
// without a TTL if absent.
func (s *Store) create(key, kind string) (*value, error) {
	v, err := s.of(key, kind)
	if v != nil || err != nil {
		return v, err
	}
	v = &value{kind: kind, ttl: -1}
	switch kind {
	case "hash":
		v.hash = map[string]string{}
	case "zset":
		v.zset = map[string]float64{}
	}
	s.keys[key] = v
	return v, nil
}

// Key is a key's state: its name, its remaining TTL in ms (-1: none),
// and its content as text.
type Key struct {
	Name    string
	TTL     int64
	Content string
}

// Keys lists every key, sorted by name. A key's content is its type,
// then its value in a deterministic order: a hash's fields sorted, a
// sorted set's members in Redis's order with their scores, a list's
// elements.
func (s *Store) Keys() []Key {
	out := make([]Key, 0, len(s.keys))
	for k, v := range s.keys {
		out = append(out, Key{Name: k, TTL: v.ttl, Content: v.render()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (v *value) render() string {
	switch v.kind {
	case "hash":
		return fmt.Sprint(v.kind, v.pairs())
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
