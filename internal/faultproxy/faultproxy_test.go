package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// setup starts a redis-server and a proxy to it; it returns the proxy and
// a client connected straight to the server, to check what Redis holds.
func setup(t *testing.T) (*Proxy, *redis.Client) {
	t.Helper()
	srv := redistest.StartServer(t)
	direct := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { direct.Close() })
	return Start(t, srv.Addr()), direct
}

// client is a go-redis client of the proxy; retries 0 keeps go-redis's
// default MaxRetries (3). opts, when given, is used as the base options.
func client(t *testing.T, p *Proxy, retries int, opts ...redis.Options) *redis.Client {
	t.Helper()
	var o redis.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Addr, o.MaxRetries = p.Addr(), retries
	c := redis.NewClient(&o)
	t.Cleanup(func() { c.Close() })
	return c
}

// getInt reads key straight from the server; a missing key is 0.
func getInt(t *testing.T, direct *redis.Client, key string) int64 {
	t.Helper()
	n, err := direct.Get(context.Background(), key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0
	}
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return n
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

func isConnError(err error) bool {
	for _, target := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE, syscall.ECONNREFUSED, net.ErrClosed} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

func TestCommandsPassAndAreCounted(t *testing.T) {
	p, _ := setup(t)
	ctx := context.Background()
	c := client(t, p, -1)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET k = %q, %v; want v", v, err)
	}
	for i := int64(1); i <= 3; i++ {
		if n, err := c.Incr(ctx, "n").Result(); err != nil || n != i {
			t.Fatalf("INCR n = %d, %v; want %d", n, err, i)
		}
	}
	for _, tc := range []struct {
		names []string
		want  int64
	}{
		{[]string{"GET"}, 1},
		{[]string{"set"}, 1},
		{[]string{"Incr"}, 3},
		{[]string{"GET", "SET", "INCR"}, 5},
		{[]string{"get", "GET"}, 1},
		{[]string{"DEL"}, 0},
	} {
		if got := p.Commands(tc.names...); got != tc.want {
			t.Errorf("Commands(%q) = %d, want %d", tc.names, got, tc.want)
		}
	}
	t.Logf("set-up commands forwarded: HELLO %d, CLIENT %d; all %d", p.Commands("HELLO"), p.Commands("CLIENT"), p.Commands())
	if got := p.Commands("HELLO"); got != 1 {
		t.Errorf("Commands(HELLO) = %d, want 1 (one connection)", got)
	}
	if all, some := p.Commands(), p.Commands("GET", "SET", "INCR", "HELLO"); all < some {
		t.Errorf("Commands() = %d < %d", all, some)
	}
}

// TestRESP3RepliesPass runs commands whose RESP3 replies have various
// types through the proxy and straight to the server, and compares.
func TestRESP3RepliesPass(t *testing.T) {
	srv := redistest.StartServer(t, "--enable-debug-command", "local")
	direct := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { direct.Close() })
	p := Start(t, srv.Addr())
	c := client(t, p, -1)
	ctx := context.Background()
	for _, args := range [][]any{
		{"HSET", "h", "a", "1", "b", "2"}, {"SADD", "s", "x", "y"}, {"ZADD", "z", "1.5", "m"},
	} {
		if err := direct.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args    []any
		wantErr bool
	}{
		{[]any{"HGETALL", "h"}, false},                  // map
		{[]any{"SMEMBERS", "s"}, false},                 // set
		{[]any{"ZSCORE", "z", "m"}, false},              // double
		{[]any{"GET", "missing"}, true},                 // null: redis.Nil
		{[]any{"DEBUG", "PROTOCOL", "bignum"}, false},   // big number
		{[]any{"DEBUG", "PROTOCOL", "true"}, false},     // boolean
		{[]any{"DEBUG", "PROTOCOL", "verbatim"}, false}, // verbatim string
		{[]any{"DEBUG", "PROTOCOL", "attrib"}, false},   // attribute, then the reply
		{[]any{"NOSUCHCOMMAND"}, true},                  // error
		{[]any{"CLIENT", "SETNAME", "fp"}, false},
	} {
		want, wantErr := direct.Do(ctx, tc.args...).Result()
		if (wantErr != nil) != tc.wantErr {
			t.Fatalf("%v straight to the server: err = %v, want error %v", tc.args, wantErr, tc.wantErr)
		}
		got, gotErr := c.Do(ctx, tc.args...).Result()
		if !reflect.DeepEqual(got, want) || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%v through the proxy = %#v, %v; straight = %#v, %v", tc.args, got, gotErr, want, wantErr)
		}
	}
}

func TestInlineCommands(t *testing.T) {
	p, _ := setup(t)
	nc, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	// Inline, an empty line (ignored), inline with arguments, then a
	// RESP array, all pipelined in one write.
	if _, err := io.WriteString(nc, "PING\r\n\r\necho  hello\r\n*1\r\n$4\r\nPING\r\n"); err != nil {
		t.Fatal(err)
	}
	want := "+PONG\r\n$5\r\nhello\r\n+PONG\r\n"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(nc, got); err != nil || string(got) != want {
		t.Fatalf("read %q, %v; want %q", got, err, want)
	}
	if p.Commands("PING") != 2 || p.Commands("ECHO") != 1 || p.Commands() != 3 {
		t.Errorf("Commands: PING %d, ECHO %d, all %d; want 2, 1, 3", p.Commands("PING"), p.Commands("ECHO"), p.Commands())
	}
}

// TestPushRelayed turns client-side caching on over RESP3: writing a key
// the connection reads makes Redis send an invalidation push, which the
// proxy must relay without losing the replies' order.
func TestPushRelayed(t *testing.T) {
	p, _ := setup(t)
	nc, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	req := "HELLO 3\r\nCLIENT TRACKING ON\r\nGET k\r\nSET k v\r\nPING\r\n"
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(nc)
	var kinds []byte
	pushes := 0
	for len(kinds) < 5 {
		rep, err := readReply(r)
		if err != nil {
			t.Fatalf("after %q: %v", kinds, err)
		}
		if rep.push {
			pushes++
			if !strings.Contains(string(rep.raw), "invalidate") {
				t.Errorf("push %q is not an invalidation", rep.raw)
			}
			continue
		}
		kinds = append(kinds, rep.raw[0])
	}
	if string(kinds) != "%+_++" || pushes != 1 {
		t.Errorf("reply types %q with %d pushes; want %q with 1", kinds, pushes, "%+_++")
	}
}

func TestCutAfterReply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		retries int // 0: go-redis's default, 3
		want    func(applied int64) bool
		wantMsg string
	}{
		{"MaxRetries -1", -1, func(n int64) bool { return n == 1 }, "exactly once"},
		{"default retries", 0, func(n int64) bool { return n > 1 }, "more than once: go-redis re-sent it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, direct := setup(t)
			ctx := context.Background()
			c := client(t, p, tc.retries)
			if err := c.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			p.CutAfterReply(func(name string, _ []string) bool { return name == "INCR" })
			_, err := c.Incr(ctx, "n").Result()
			if err == nil || !isConnError(err) {
				t.Fatalf("INCR through the cut: err = %v, want a connection error", err)
			}
			applied := getInt(t, direct, "n")
			t.Logf("INCR error %q; applied %d times", err, applied)
			if !tc.want(applied) {
				t.Errorf("INCR applied %d times, want %s", applied, tc.wantMsg)
			}
			if got := p.Commands("INCR"); got != applied {
				t.Errorf("Commands(INCR) = %d, want %d (each forwarded INCR applied)", got, applied)
			}
			p.CutAfterReply(nil)
			if n, err := c.Incr(ctx, "n").Result(); err != nil || n != applied+1 {
				t.Errorf("INCR after disarming = %d, %v; want %d", n, err, applied+1)
			}
		})
	}
}

func TestPipelineCutAtSecond(t *testing.T) {
	p, direct := setup(t)
	ctx := context.Background()
	c := client(t, p, -1)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	p.CutAfterReply(func(name string, args []string) bool {
		return name == "INCR" && len(args) > 0 && args[0] == "b"
	})
	pipe := c.Pipeline()
	incrA, incrB, incrC := pipe.Incr(ctx, "a"), pipe.Incr(ctx, "b"), pipe.Incr(ctx, "c")
	if _, err := pipe.Exec(ctx); err == nil || !isConnError(err) {
		t.Fatalf("pipeline through the cut: err = %v, want a connection error", err)
	}
	t.Logf("pipeline results: a %v, b %v, c %v", incrA, incrB, incrC)
	for key, want := range map[string]int64{"a": 1, "b": 1, "c": 0} {
		if got := getInt(t, direct, key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	if got := p.Commands("INCR"); got != 2 {
		t.Errorf("Commands(INCR) = %d, want 2 (the third never forwarded)", got)
	}
}

func TestDelay(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts redis.Options
	}{
		{"context deadline", redis.Options{ContextTimeoutEnabled: true}},
		{"read timeout", redis.Options{ReadTimeout: 50 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, direct := setup(t)
			c := client(t, p, -1, tc.opts)
			if err := c.Ping(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			p.Delay(time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := c.Incr(ctx, "n").Err()
			if took := time.Since(start); !isTimeout(err) || took > 500*time.Millisecond {
				t.Fatalf("delayed INCR: err = %v after %v, want a timeout after about 50 ms", err, took)
			}
			if got := getInt(t, direct, "n"); got != 1 {
				t.Errorf("n = %d after the timed-out INCR, want 1 (applied)", got)
			}
			p.Delay(0)
			if n, err := c.Incr(context.Background(), "n").Result(); err != nil || n != 2 {
				t.Errorf("INCR after Delay(0) = %d, %v; want 2", n, err)
			}
		})
	}
}

func TestBlackhole(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing bool // a connection opened before Blackhole(true)
	}{{"existing connection", true}, {"new connection", false}} {
		t.Run(tc.name, func(t *testing.T) {
			p, direct := setup(t)
			c := client(t, p, -1, redis.Options{ContextTimeoutEnabled: true})
			if tc.existing {
				if err := c.Ping(context.Background()).Err(); err != nil {
					t.Fatal(err)
				}
			}
			before := p.Commands()
			p.Blackhole(true)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if err := c.Set(ctx, "k", "v", 0).Err(); !isTimeout(err) {
				t.Fatalf("SET through the blackhole: err = %v, want a timeout", err)
			}
			if got := p.Commands(); got != before {
				t.Errorf("Commands() grew from %d to %d", before, got)
			}
			if n, _ := direct.Exists(context.Background(), "k").Result(); n != 0 {
				t.Errorf("k exists: the SET reached Redis")
			}
			p.Blackhole(false)
			if err := c.Set(context.Background(), "k", "v", 0).Err(); err != nil {
				t.Errorf("SET after Blackhole(false): %v", err)
			}
		})
	}
}

// TestBlackholeKeepsConnectionOpen checks on a raw connection that a
// blackholed command is dropped, not answered late, and the connection
// stays usable.
func TestBlackholeKeepsConnectionOpen(t *testing.T) {
	p, _ := setup(t)
	p.Blackhole(true)
	nc, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	io.WriteString(nc, "ECHO dropped\r\n")
	nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := nc.Read(make([]byte, 64)); !isTimeout(err) {
		t.Fatalf("read through the blackhole = %d bytes, %v; want a timeout", n, err)
	}
	p.Blackhole(false)
	io.WriteString(nc, "ECHO kept\r\n")
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	want := "$4\r\nkept\r\n"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(nc, got); err != nil || string(got) != want {
		t.Fatalf("read %q, %v; want %q", got, err, want)
	}
	if got := p.Commands("ECHO"); got != 1 {
		t.Errorf("Commands(ECHO) = %d, want 1", got)
	}
}

func TestRefuse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		retries  int // 0: go-redis's default, 3
		existing bool
		within   time.Duration
	}{
		// A refusal is answered at once, not at a timeout (go-redis's
		// 5 s dial and 3 s read timeouts): the bounds leave a loaded
		// machine room and stay below those.
		{"MaxRetries -1, new connection", -1, false, time.Second},
		{"MaxRetries -1, existing connection", -1, true, time.Second},
		// go-redis tries 4 times, sleeping its retry backoff (up to
		// 512 ms) in between.
		{"default retries, new connection", 0, false, 2500 * time.Millisecond},
		{"default retries, existing connection", 0, true, 2500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := setup(t)
			c := client(t, p, tc.retries)
			ctx := context.Background()
			if tc.existing {
				if err := c.Ping(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			p.Refuse(true)
			start := time.Now()
			err := c.Ping(ctx).Err()
			took := time.Since(start)
			t.Logf("PING error %q after %v", err, took)
			if !isConnError(err) || isTimeout(err) || took > tc.within {
				t.Fatalf("PING while refusing: err = %v after %v, want a connection error within %v", err, took, tc.within)
			}
			p.Refuse(false)
			if err := c.Ping(ctx).Err(); err != nil {
				t.Errorf("PING after Refuse(false): %v", err)
			}
		})
	}
}

// TestStopClosesConnections checks that the proxy's cleanup closes an idle
// connection and one whose reply is held by Delay.
func TestStopClosesConnections(t *testing.T) {
	srv := redistest.StartServer(t)
	var idle, delayed net.Conn
	t.Run("proxy", func(t *testing.T) {
		p := Start(t, srv.Addr())
		var err error
		if idle, err = net.Dial("tcp", p.Addr()); err != nil {
			t.Fatal(err)
		}
		if delayed, err = net.Dial("tcp", p.Addr()); err != nil {
			t.Fatal(err)
		}
		p.Delay(time.Hour)
		io.WriteString(delayed, "PING\r\n")
		for deadline := time.Now().Add(5 * time.Second); p.Commands("PING") == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the PING was not forwarded within 5 s")
			}
		}
	})
	for _, nc := range []net.Conn{idle, delayed} {
		defer nc.Close()
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := nc.Read(make([]byte, 64)); err != io.EOF {
			t.Errorf("read after the proxy stopped = %d bytes, %v; want EOF", n, err)
		}
	}
}

func TestReadReply(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		push     bool
	}{
		{"simple string", "+OK\r\n", false},
		{"empty simple string", "+\r\n", false},
		{"error", "-ERR bad\r\n", false},
		{"integer", ":-12\r\n", false},
		{"bulk", "$3\r\nf\r\n\r\n", false},
		{"empty bulk", "$0\r\n\r\n", false},
		{"null bulk", "$-1\r\n", false},
		{"null array", "*-1\r\n", false},
		{"array", "*3\r\n$1\r\na\r\n:1\r\n*1\r\n+x\r\n", false},
		{"empty array", "*0\r\n", false},
		{"map", "%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n_\r\n", false},
		{"set", "~2\r\n,1.5\r\n#t\r\n", false},
		{"null", "_\r\n", false},
		{"double", ",-inf\r\n", false},
		{"boolean", "#f\r\n", false},
		{"big number", "(3492890328409238509324850943850943825024385\r\n", false},
		{"verbatim", "=15\r\ntxt:Some string\r\n", false},
		{"blob error", "!21\r\nSYNTAX invalid syntax\r\n", false},
		{"push", ">3\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n:1\r\n", true},
		{"attribute before a reply", "|1\r\n+ttl\r\n:3\r\n*2\r\n:1\r\n:2\r\n", false},
		{"attribute before a push", "|1\r\n+a\r\n+b\r\n>1\r\n+p\r\n", true},
		{"attribute inside an array", "*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tc.in + "+NEXT\r\n"))
			got, err := readReply(r)
			if err != nil || string(got.raw) != tc.in || got.push != tc.push {
				t.Fatalf("readReply = %q push %v, %v; want %q push %v", got.raw, got.push, err, tc.in, tc.push)
			}
			if next, err := readReply(r); err != nil || string(next.raw) != "+NEXT\r\n" {
				t.Errorf("next reply = %q, %v; want +NEXT", next.raw, err)
			}
		})
	}
}

func TestReadReplyErrors(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"unknown type", "?x\r\n"},
		{"no CR", "+OK\n"},
		{"short bulk", "$5\r\nab\r\n"},
		{"bulk without CRLF", "$2\r\nabXY"},
		{"bad length", "$x\r\n"},
		{"streamed string", "$?\r\n;3\r\nabc\r\n;0\r\n"},
		{"truncated array", "*2\r\n:1\r\n"},
		{"negative count", "*-2\r\n"},
		{"too deep", strings.Repeat("*1\r\n", maxDepth+2) + ":1\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := readReply(bufio.NewReader(strings.NewReader(tc.in))); err == nil {
				t.Errorf("readReply(%q) = %q, want an error", tc.in, got.raw)
			}
		})
	}
}

func TestReadCommand(t *testing.T) {
	for _, tc := range []struct {
		in, name string
		args     []string
	}{
		{"*2\r\n$3\r\nget\r\n$1\r\nk\r\n", "GET", []string{"k"}},
		{"*3\r\n$3\r\nSET\r\n$4\r\na\r\nb\r\n$0\r\n\r\n", "SET", []string{"a\r\nb", ""}},
		{"*1\r\n$4\r\nPING\r\n", "PING", []string{}},
		{"ping\r\n", "PING", []string{}},
		{"set  k \t v\r\n", "SET", []string{"k", "v"}},
		{"PING\n", "PING", []string{}},
		{"\r\n", "", nil},
		{"*0\r\n", "", nil},
	} {
		r := bufio.NewReader(strings.NewReader(tc.in + "NEXT\r\n"))
		got, err := readCommand(r)
		if err != nil || got.name != tc.name || string(got.raw) != tc.in ||
			(len(got.args) != 0 || len(tc.args) != 0) && !reflect.DeepEqual(got.args, tc.args) {
			t.Errorf("readCommand(%q) = %q %q raw %q, %v; want %q %q", tc.in, got.name, got.args, got.raw, err, tc.name, tc.args)
			continue
		}
		if next, err := readCommand(r); err != nil || next.name != "NEXT" {
			t.Errorf("after %q: next command %q, %v; want NEXT", tc.in, next.name, err)
		}
	}
	for _, in := range []string{"*1\r\n:1\r\n", "*x\r\n", "*1\r\n$3\r\nGE", "*2\r\n$3\r\nGET\r\n", "*1\r\n$-1\r\n", "PING"} {
		if got, err := readCommand(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("readCommand(%q) = %q, want an error", in, got.name)
		}
	}
}
