package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// monitoredCall is one script call as MONITOR showed it: the call the
// server received (EVALSHA, the SHA1, the number of keys, the keys and
// the arguments) and the commands the script ran, in order, each with
// its arguments.
type monitoredCall struct {
	Call []string
	Ran  [][]string
}

// keys are the call's KEYS; argv its ARGV.
func (m monitoredCall) keys() []string { return m.Call[3 : 3+m.numKeys()] }
func (m monitoredCall) argv() []string { return m.Call[3+m.numKeys():] }

// numKeys is the call's number of keys, 0 if it is not a script call.
func (m monitoredCall) numKeys() int {
	if len(m.Call) < 3 {
		return 0
	}
	n, err := strconv.Atoi(m.Call[2])
	if err != nil || n < 0 || 3+n > len(m.Call) {
		return 0
	}
	return n
}

// monitorMark is the ECHO that ends what monitor reads.
const monitorMark = "limitspec-bench: end of the monitored call"

// monitor decides one request of id at now by d, on the server of addr
// through rdb, while a MONITOR connection to the server listens, and
// returns what it saw of the call.
func monitor(ctx context.Context, addr string, rdb *redis.Client, d *redisDecider, id string, now time.Time) (monitoredCall, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return monitoredCall{}, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReader(conn)
	if _, err := conn.Write([]byte("*1\r\n$7\r\nMONITOR\r\n")); err != nil {
		return monitoredCall{}, err
	}
	if line, err := r.ReadString('\n'); err != nil || line != "+OK\r\n" {
		return monitoredCall{}, fmt.Errorf("MONITOR: %q, %v", line, err)
	}
	p := rdb.Pipeline()
	reply := d.queue(ctx, p, id, now)
	if _, err := p.Exec(ctx); err != nil {
		return monitoredCall{}, fmt.Errorf("%s: %w", d.Name, err)
	}
	if ok, err := d.admitted(reply.Val()); err != nil || !ok {
		return monitoredCall{}, fmt.Errorf("%s: the monitored decision denied (%v)", d.Name, err)
	}
	if err := rdb.Echo(ctx, monitorMark).Err(); err != nil {
		return monitoredCall{}, err
	}
	return readMonitor(r)
}

// readMonitor reads MONITOR's lines up to the ECHO of monitorMark: the
// first EVALSHA is the call, the commands scripts ran are its script's.
func readMonitor(r *bufio.Reader) (monitoredCall, error) {
	var m monitoredCall
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return monitoredCall{}, fmt.Errorf("MONITOR: %w", err)
		}
		fromScript, args, err := parseMonitorLine(strings.TrimSuffix(line, "\r\n"))
		switch {
		case err != nil:
			return monitoredCall{}, err
		case fromScript:
			m.Ran = append(m.Ran, args)
		case strings.EqualFold(args[0], "echo") && len(args) == 2 && args[1] == monitorMark:
			if m.Call == nil {
				return monitoredCall{}, fmt.Errorf("MONITOR showed no EVALSHA")
			}
			return m, nil
		case m.Call == nil && strings.EqualFold(args[0], "evalsha") && len(args) >= 3:
			m.Call = args
		}
	}
}

// parseMonitorLine reads one line MONITOR sends, as
//
//	+1700000000.000000 [0 lua] "GET" "{user:1}:gc:1000000:60000"
//
// fromScript says a script ran the command (the client named "lua").
func parseMonitorLine(line string) (fromScript bool, args []string, err error) {
	rest, ok := strings.CutPrefix(line, "+")
	if ok {
		_, rest, ok = strings.Cut(rest, " [")
	}
	var client string
	if ok {
		client, rest, ok = strings.Cut(rest, "] ")
	}
	if !ok {
		return false, nil, fmt.Errorf("MONITOR line %q: not a command", line)
	}
	_, source, _ := strings.Cut(client, " ")
	for rest != "" {
		var arg string
		if arg, rest, err = unquoteRepr(rest); err != nil {
			return false, nil, fmt.Errorf("MONITOR line %q: %w", line, err)
		}
		args = append(args, arg)
		rest = strings.TrimPrefix(rest, " ")
	}
	if len(args) == 0 {
		return false, nil, fmt.Errorf("MONITOR line %q: no command", line)
	}
	return source == "lua", args, nil
}

// reprEscapes are the one-letter escapes of a quoted string as Redis
// writes it (sdscatrepr), and the bytes they stand for.
var reprEscapes = map[byte]byte{'\\': '\\', '"': '"', 'n': '\n', 'r': '\r', 't': '\t', 'a': '\a', 'b': '\b'}

// unquoteRepr reads the quoted string s begins with, as Redis writes
// it: "..." with reprEscapes and \xhh; it returns the string and what
// follows it.
func unquoteRepr(s string) (string, string, error) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", fmt.Errorf("an argument does not begin with '\"'")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return b.String(), s[i+1:], nil
		case c != '\\' || i+1 == len(s):
			b.WriteByte(c)
		case s[i+1] == 'x' && i+3 < len(s):
			n, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err != nil {
				return "", "", fmt.Errorf("bad escape %q", s[i:i+4])
			}
			b.WriteByte(byte(n))
			i += 3
		default:
			e, ok := reprEscapes[s[i+1]]
			if !ok {
				return "", "", fmt.Errorf("bad escape %q", s[i:i+2])
			}
			b.WriteByte(e)
			i++
		}
	}
	return "", "", fmt.Errorf("an argument has no closing '\"'")
}

// replayLua is Lua that runs the commands m's script ran, with the same
// arguments: an argument that is one of the call's keys or arguments is
// written KEYS[i] or ARGV[i], any other as a constant string; with
// timed (ARGV[1] is now_ms), one that begins with now_ms's digits (a
// value the script derived from the time: a log's entry, a stored time)
// is written ARGV[1] .. the rest, so that it is new at each call as the
// script's is (a sorted set's member added, not updated).
func replayLua(m monitoredCall, timed bool) string {
	keys, argv := m.keys(), m.argv()
	var b strings.Builder
	for _, cmd := range m.Ran {
		parts := []string{luaString(cmd[0])}
		for _, a := range cmd[1:] {
			parts = append(parts, luaArg(a, keys, argv, timed))
		}
		b.WriteString("redis.call(" + strings.Join(parts, ", ") + ")\n")
	}
	return b.String()
}

// luaArg writes the argument a of a replayed command (see replayLua).
func luaArg(a string, keys, argv []string, timed bool) string {
	if i := slices.Index(keys, a); i >= 0 {
		return fmt.Sprintf("KEYS[%d]", i+1)
	}
	if i := slices.Index(argv, a); i >= 0 {
		return fmt.Sprintf("ARGV[%d]", i+1)
	}
	if timed && len(argv) > 0 && argv[0] != "" && strings.HasPrefix(a, argv[0]) {
		return "ARGV[1] .. " + luaString(a[len(argv[0]):])
	}
	return luaString(a)
}

// luaString is s as a Lua string literal: between single quotes, a
// quote, a backslash and any byte that is not printable ASCII escaped
// by its decimal code.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c > '~' || c == '\'' || c == '\\' {
			fmt.Fprintf(&b, "\\%03d", c)
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('\'')
	return b.String()
}
