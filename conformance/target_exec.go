package conformance

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// ExecProtocol is the version of the line protocol of docs/protocol.md
// that ExecTarget speaks.
const ExecProtocol = 1

// ExecFields are the result fields an adapter may report, as the vectors
// name them (docs/vectors.md, "Expectations").
var ExecFields = []string{"allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms", "delay_ms", "tier"}

// ExecOptions configure an ExecTarget.
type ExecOptions struct {
	// Timeout bounds the wait for each reply (the handshake's included);
	// an adapter that takes longer is stopped, and every later step and
	// vector fails. 10 s when 0.
	Timeout time.Duration
	// Stderr receives the adapter's stderr; discarded when nil.
	Stderr io.Writer
}

// ExecTarget runs the vectors on an implementation in any language: a
// program (an adapter) that speaks the line protocol of docs/protocol.md
// on its stdin and stdout. It is a peer (Peer): held to the vectors
// alone, on the result fields it reports, and to no other target. It
// runs the vectors of the algorithms the adapter implements, and skips
// those of the others, the policies and the vectors with a view; it holds
// no Redis keys, so the runner skips the wrong_type steps, as on package
// goimpl's limiter.
type ExecTarget struct {
	command    string
	hello      ExecHello
	timeout    time.Duration
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	lines      chan []byte   // the adapter's stdout, line by line; closed at its end
	exited     chan struct{} // closed once the adapter has exited
	exitErr    error         // how it exited, once exited is closed
	dead       string        // why the adapter answers no more; "" while it does
	fault      string        // why the last step got no valid reply; "" when it did
	vectorName string
}

// ExecHello is the adapter's reply to the handshake (docs/protocol.md).
type ExecHello struct {
	Protocol   int      `json:"protocol"`
	Name       string   `json:"name"`
	Algorithms []string `json:"algorithms"`
	Fields     []string `json:"fields"`
}

// ExecRequest is a decide or reset request of the protocol: a step's
// input.
type ExecRequest struct {
	Op        string                 `json:"op"`
	Algorithm string                 `json:"algorithm"`
	Params    map[string]json.Number `json:"params"`
	Key       string                 `json:"key"`
	TMs       int64                  `json:"t_ms"`
	Cost      json.Number            `json:"cost"`
	Force     bool                   `json:"force"`
	Inputs    map[string]string      `json:"inputs,omitempty"`
}

// execReply is the adapter's reply to a decide or reset request: the
// result fields it reports, as a vector's step expects them, or an error
// class (which hides Expect's) and its message.
type execReply struct {
	Expect
	Error   *string `json:"error"`
	Message string  `json:"message"`
}

// NewExecTarget starts command through `sh -c` and runs the handshake.
// Close stops the adapter.
func NewExecTarget(command string, opts ExecOptions) (*ExecTarget, error) {
	t := &ExecTarget{command: command, timeout: opts.Timeout}
	if t.timeout <= 0 {
		t.timeout = 10 * time.Second
	}
	if err := t.start(opts.Stderr); err != nil {
		return nil, err
	}
	if err := t.handshake(); err != nil {
		t.Close()
		return nil, fmt.Errorf("exec %q: handshake: %w", command, err)
	}
	return t, nil
}

// start starts the adapter and the reader of its stdout.
func (t *ExecTarget) start(stderr io.Writer) error {
	t.cmd = exec.Command("sh", "-c", t.command)
	t.cmd.Stderr = stderr
	ownProcessGroup(t.cmd)
	var err error
	if t.stdin, err = t.cmd.StdinPipe(); err != nil {
		return err
	}
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("exec %q: %w", t.command, err)
	}
	t.lines, t.exited = make(chan []byte), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			t.lines <- slices.Clone(sc.Bytes())
		}
		close(t.lines)
		t.exitErr = t.cmd.Wait() // after the last read, as os/exec requires
		close(t.exited)
	}()
	return nil
}

func (t *ExecTarget) handshake() error {
	line, err := t.roundTrip(map[string]any{"op": "hello", "protocol": ExecProtocol})
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t.hello); err != nil {
		return fmt.Errorf("reply %s: %v", line, err)
	}
	if t.hello.Protocol != ExecProtocol {
		return fmt.Errorf("the adapter speaks protocol %d, verify %d", t.hello.Protocol, ExecProtocol)
	}
	if len(t.hello.Algorithms) == 0 {
		return errors.New("the adapter names no algorithm")
	}
	for _, f := range t.hello.Fields {
		if !slices.Contains(ExecFields, f) {
			return fmt.Errorf("unknown field %q (the fields are %s)", f, strings.Join(ExecFields, ", "))
		}
	}
	return nil
}

// roundTrip writes one request line and reads one reply line, within the
// timeout. An adapter that does not answer in time, or has exited, is
// stopped and answers no more.
func (t *ExecTarget) roundTrip(req any) ([]byte, error) {
	if t.dead != "" {
		return nil, errors.New("the adapter is not running: " + t.dead)
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := t.stdin.Write(append(b, '\n')); err != nil {
		return nil, t.die(fmt.Sprintf("writing %s: %v", b, err))
	}
	timer := time.NewTimer(t.timeout)
	defer timer.Stop()
	select {
	case line, ok := <-t.lines:
		if !ok {
			return nil, t.die(fmt.Sprintf("the adapter exited before replying to %s", b))
		}
		return line, nil
	case <-timer.C:
		return nil, t.die(fmt.Sprintf("no reply within %v to %s; the adapter was stopped", t.timeout, b))
	}
}

// die stops the adapter and records why it answers no more.
func (t *ExecTarget) die(why string) error {
	t.stop()
	if t.exitErr != nil {
		why += " (" + t.exitErr.Error() + ")"
	}
	if t.vectorName != "" {
		why = fmt.Sprintf("%s, in vector %s", why, t.vectorName)
	}
	t.dead = why
	return errors.New(why)
}

// stop kills the adapter (and what it started) unless it has exited,
// and waits for its end.
func (t *ExecTarget) stop() {
	select {
	case <-t.exited:
		return
	default:
	}
	killProcessGroup(t.cmd)
	for range t.lines { // the reader exits when the pipe closes
	}
	<-t.exited
}

// Name is "exec:" and the name the adapter gave in the handshake.
func (t *ExecTarget) Name() string {
	if t.hello.Name == "" {
		return "exec"
	}
	return "exec:" + t.hello.Name
}

// Describe says what the adapter implements and reports, and which
// fields are therefore not compared.
func (t *ExecTarget) Describe() string {
	var unreported []string
	for _, f := range ExecFields {
		if !slices.Contains(t.hello.Fields, f) {
			unreported = append(unreported, f)
		}
	}
	return fmt.Sprintf("%s (%s): algorithms %s; compares %s; not compared: %s", t.Name(), t.command,
		strings.Join(t.hello.Algorithms, ", "), strings.Join(slices.Concat(t.hello.Fields, []string{"error"}), ", "), cmp.Or(strings.Join(unreported, ", "), "none"))
}

// Begin skips a policy, an algorithm the adapter does not implement and
// a vector with a view, and otherwise asks the adapter to drop all state.
func (t *ExecTarget) Begin(v *Vector) error {
	t.vectorName, t.fault = v.Name, ""
	switch {
	case v.Policy != nil:
		return fmt.Errorf("%w: a policy; the protocol decides algorithms only", ErrNotApplicable)
	case !slices.Contains(t.hello.Algorithms, v.Algorithm):
		return fmt.Errorf("%w: %s; the adapter implements %s", ErrNotApplicable, v.Algorithm, strings.Join(t.hello.Algorithms, ", "))
	}
	for i, s := range v.Steps {
		if s.View != "" {
			return fmt.Errorf("%w: step %d runs the view %q; the protocol has no views", ErrNotApplicable, i, s.View)
		}
		if s.ID != "" {
			return fmt.Errorf("%w: step %d carries a request id; the protocol has none", ErrNotApplicable, i)
		}
	}
	line, err := t.roundTrip(map[string]any{"op": "begin", "vector": v.Name})
	if err != nil {
		return err
	}
	o, err := t.outcome(line, false)
	if err == nil && o.Error != "" {
		err = errors.New(o.Message)
	}
	if err != nil {
		return fmt.Errorf("begin: reply %s: %v", line, err)
	}
	return nil
}

func (t *ExecTarget) Decide(r Request) Outcome { return t.step("decide", r, true) }

func (t *ExecTarget) Reset(r Request) Outcome { return t.step("reset", r, false) }

func (t *ExecTarget) View(view string, r Request) Outcome {
	t.fault = "the protocol has no views"
	return Outcome{}
}

// step sends r as op and reads the outcome; a missing or malformed reply
// is the step's fault.
func (t *ExecTarget) step(op string, r Request, decision bool) Outcome {
	t.fault = ""
	line, err := t.roundTrip(ExecRequest{Op: op, Algorithm: r.Algorithm, Params: r.Params, Key: r.Key,
		TMs: r.NowMs, Cost: r.Cost, Force: r.Force, Inputs: r.Inputs})
	if err != nil {
		t.fault = err.Error()
		return Outcome{}
	}
	o, err := t.outcome(line, decision)
	if err != nil {
		t.fault = fmt.Sprintf("reply %s to %s: %v", line, op, err)
	}
	return o
}

// outcome reads a reply: an error, or a decision holding every field the
// adapter reports (decision), or an empty object.
func (t *ExecTarget) outcome(line []byte, decision bool) (Outcome, error) {
	var rep execReply
	if err := json.Unmarshal(line, &rep); err != nil {
		return Outcome{}, err
	}
	if rep.Error != nil {
		if *rep.Error == "" || strings.ContainsAny(*rep.Error, " \t\n") {
			return Outcome{}, fmt.Errorf("error %q is no class (one word, such as BADINPUT)", *rep.Error)
		}
		return failure(*rep.Error, *rep.Error+" "+rep.Message), nil
	}
	if !decision {
		return Outcome{}, nil
	}
	var o Outcome
	ints := map[string]struct {
		got  *int64
		into *int64
	}{"limit": {rep.Limit, &o.Limit}, "remaining": {rep.Remaining, &o.Remaining},
		"retry_after_ms": {rep.RetryAfterMs, &o.RetryAfterMs}, "reset_after_ms": {rep.ResetAfterMs, &o.ResetAfterMs},
		"delay_ms": {rep.DelayMs, &o.DelayMs}, "tier": {rep.Tier, &o.Tier}}
	for _, f := range t.hello.Fields {
		switch f {
		case "allowed":
			if rep.Allowed == nil {
				return o, errors.New("no allowed, which the adapter said it reports")
			}
			o.Allowed = *rep.Allowed
		default:
			if ints[f].got == nil {
				return o, fmt.Errorf("no %s, which the adapter said it reports", f)
			}
			*ints[f].into = *ints[f].got
		}
	}
	return o, nil
}

// Reported keeps the fields of e the adapter reports, and error.
func (t *ExecTarget) Reported(e Expect) Expect {
	out := Expect{Error: e.Error}
	fields := map[string]func(){
		"allowed": func() { out.Allowed = e.Allowed }, "limit": func() { out.Limit = e.Limit },
		"remaining": func() { out.Remaining = e.Remaining }, "retry_after_ms": func() { out.RetryAfterMs = e.RetryAfterMs },
		"reset_after_ms": func() { out.ResetAfterMs = e.ResetAfterMs }, "delay_ms": func() { out.DelayMs = e.DelayMs },
		"tier": func() { out.Tier = e.Tier }}
	for _, f := range t.hello.Fields {
		fields[f]()
	}
	return out
}

// Fault is why the last step got no valid reply, "" when it did.
func (t *ExecTarget) Fault() string { return t.fault }

// Close closes the adapter's stdin, the signal to exit, and stops it if
// it has not exited within the timeout.
func (t *ExecTarget) Close() error {
	t.stdin.Close()
	select {
	case <-t.exited:
	case <-time.After(t.timeout):
		t.stop()
	}
	return nil
}
