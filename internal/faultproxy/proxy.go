// Package faultproxy is a TCP proxy for the Redis protocol that tests put
// between a client (go-redis) and a real redis-server to produce network
// faults: a reply lost after Redis executed the command (CutAfterReply), a
// slow Redis (Delay), a partition (Blackhole) and a server that is down
// (Refuse).
//
// The proxy reads the client's commands one at a time, in order, per
// connection: it forwards one command, reads the server's whole reply to
// it and relays that reply before it reads the next command. Pipelined
// commands therefore reach Redis one by one, and a fault chosen for one
// command affects exactly that command. Each client connection gets its
// own connection to the target.
//
// Requests are RESP arrays of bulk strings (RESP2 and RESP3 clients send
// the same) or inline commands such as "PING\r\n". Replies may be any
// RESP2 or RESP3 type. RESP3 push messages (">") are out-of-band: a push
// the server sends while the proxy waits for a reply is relayed at once
// and the proxy keeps reading until the reply. A push sent while no
// command is pending is relayed when the next command's reply is read, so
// the proxy does not suit connections in subscribe mode (SUBSCRIBE,
// SSUBSCRIBE, MONITOR), whose replies do not follow commands one to one.
package faultproxy

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// dialTimeout bounds the proxy's dial to the target for each accepted
// connection.
const dialTimeout = 2 * time.Second

// Proxy forwards TCP connections from a loopback listener to a target
// address. Its methods are safe for concurrent use.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup // the accept loop and each connection's goroutine

	mu        sync.Mutex
	closed    bool
	conns     map[*conn]struct{}
	counts    map[string]int64 // upper-case command name -> commands forwarded
	cut       func(name string, args []string) bool
	delay     time.Duration
	blackhole bool
	refuse    bool
}

// Start listens on 127.0.0.1:0 and forwards every accepted connection to
// target (host:port). The proxy stops at tb.Cleanup: it closes the
// listener and every connection, and waits for its goroutines. Start
// fails the test if it cannot listen.
func Start(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("faultproxy: listen: %v", err)
	}
	p := &Proxy{
		target: target,
		ln:     ln,
		conns:  make(map[*conn]struct{}),
		counts: make(map[string]int64),
	}
	p.wg.Add(1)
	go p.acceptLoop()
	tb.Cleanup(p.stop)
	return p
}

// Addr is the address clients dial, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Commands counts the commands forwarded to the target whose name
// (case-insensitive) is in names (all when none given), since Start.
// Commands dropped by Blackhole are not counted; a command cut by
// CutAfterReply is (it reached the server). Connection set-up commands
// such as HELLO and CLIENT SETINFO count like any other.
func (p *Proxy) Commands(names ...string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n int64
	if len(names) == 0 {
		for _, c := range p.counts {
			n += c
		}
		return n
	}
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		name = strings.ToUpper(name)
		if !seen[name] {
			seen[name] = true
			n += p.counts[name]
		}
	}
	return n
}

// CutAfterReply arms the proxy so that each following command for which
// f(name, args) returns true is forwarded to the server, the server's
// whole reply to it is read and thrown away, and then the client's
// connection (and the proxy's connection to the server) is closed: the
// client sees its connection break after Redis executed the command.
// name is the command's name in upper case ("INCR") and args the
// arguments after it. f == nil disarms. f is called from the connections'
// goroutines, one call per command read while armed, and must be safe for
// concurrent use. Commands are processed one at a time per connection in
// order, so the cut happens exactly at the chosen command and the
// commands after it on that connection are never forwarded.
func (p *Proxy) CutAfterReply(f func(name string, args []string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = f
}

// Delay holds each reply for d before relaying it (0 stops delaying;
// applies to replies read after the call). The command itself reaches the
// server at once: only its reply is late. Push messages are not delayed.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Blackhole, when on, makes the proxy forward nothing: new and existing
// connections stay open, commands are read and dropped, no reply comes (a
// partition); off restores forwarding for new commands. A command is
// dropped or forwarded as Blackhole stands when the proxy reads it: the
// reply to a command forwarded before Blackhole(true) is still relayed,
// and commands dropped stay lost after Blackhole(false), so the client
// that sent them waits for replies that never come (go-redis times out
// and discards such a connection).
func (p *Proxy) Blackhole(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blackhole = on
}

// Refuse, when on, closes new connections at once and closes existing
// ones (a server that is down); off accepts again. The listener stays
// open, so a client's dial succeeds and its first read or write fails
// (EOF or connection reset), as quickly as a refused dial would.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	p.refuse = on
	var victims []*conn
	if on {
		for c := range p.conns {
			victims = append(victims, c)
		}
	}
	p.mu.Unlock()
	for _, c := range victims {
		c.close()
	}
}

// stop closes the listener and every connection and waits for the
// goroutines.
func (p *Proxy) stop() {
	p.mu.Lock()
	p.closed = true
	victims := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		victims = append(victims, c)
	}
	p.mu.Unlock()
	p.ln.Close()
	for _, c := range victims {
		c.close()
	}
	p.wg.Wait()
}

// acceptLoop accepts connections until the listener is closed.
func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return
		}
		c := &conn{p: p, client: nc, done: make(chan struct{})}
		if !p.register(c) {
			nc.Close()
			continue
		}
		go c.serve()
	}
}

// register adds c to the open connections and to the wait group, unless
// the proxy is stopped or refusing.
func (p *Proxy) register(c *conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.refuse {
		return false
	}
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	return true
}

// unregister removes c from the open connections.
func (p *Proxy) unregister(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// settings is a snapshot of the faults armed when a command is read.
type settings struct {
	cut       func(name string, args []string) bool
	blackhole bool
}

func (p *Proxy) settings() settings {
	p.mu.Lock()
	defer p.mu.Unlock()
	return settings{cut: p.cut, blackhole: p.blackhole}
}

func (p *Proxy) currentDelay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

func (p *Proxy) count(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[name]++
}

// conn is one client connection and the proxy's connection to the target
// for it.
type conn struct {
	p      *Proxy
	client net.Conn
	done   chan struct{} // closed by close

	mu     sync.Mutex
	server net.Conn // nil until dialled
	closed bool
}

// close closes both sides; it is idempotent.
func (c *conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	close(c.done)
	c.client.Close()
	if c.server != nil {
		c.server.Close()
	}
}

// setServer records the connection to the target, or closes it when c is
// already closed.
func (c *conn) setServer(s net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		s.Close()
		return false
	}
	c.server = s
	return true
}

// serve dials the target and then processes the client's commands one at
// a time until either side fails, a cut, Refuse or stop.
func (c *conn) serve() {
	defer c.p.wg.Done()
	defer c.p.unregister(c)
	defer c.close()
	s, err := net.DialTimeout("tcp", c.p.target, dialTimeout)
	if err != nil || !c.setServer(s) {
		return
	}
	cr := bufio.NewReader(c.client)
	sr := bufio.NewReader(s)
	for {
		cmd, err := readCommand(cr)
		if err != nil {
			return
		}
		if cmd.name == "" {
			continue // an empty inline line: Redis ignores it too
		}
		st := c.p.settings()
		if st.blackhole {
			continue
		}
		cutIt := st.cut != nil && st.cut(cmd.name, cmd.args)
		if !c.forward(cmd, sr, cutIt) {
			return
		}
	}
}

// forward sends cmd to the server, reads its reply (relaying push
// messages that come first) and relays the reply after the delay, or
// throws it away when cutIt. It reports whether to go on.
func (c *conn) forward(cmd command, sr *bufio.Reader, cutIt bool) bool {
	if _, err := c.server.Write(cmd.raw); err != nil {
		return false
	}
	c.p.count(cmd.name)
	for {
		reply, err := readReply(sr)
		if err != nil {
			return false
		}
		if cutIt && !reply.push {
			return false
		}
		if !reply.push && !c.wait(c.p.currentDelay()) {
			return false
		}
		if _, err := c.client.Write(reply.raw); err != nil {
			return false
		}
		if !reply.push {
			return true
		}
	}
}

// wait sleeps for d, and reports false if the connection was closed
// meanwhile.
func (c *conn) wait(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.done:
		return false
	}
}
