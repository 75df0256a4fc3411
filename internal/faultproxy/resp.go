package faultproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits on what the proxy accepts (Redis's own proto-max-bulk-len is
// 512 MB); they keep a corrupt length from allocating without bound.
const (
	maxBulkLen  = 512 << 20
	maxElements = 1 << 24
	maxDepth    = 64
)

// command is one client request.
type command struct {
	name string   // upper case; "" for a request Redis ignores (empty line, "*0")
	args []string // the arguments after the name
	raw  []byte   // the bytes to forward, as the client sent them
}

// readCommand reads one request: an array of bulk strings
// ("*<n>\r\n$<len>\r\n<bytes>\r\n..."), or an inline command ("PING\r\n"),
// whose words are split on white space. The raw bytes are forwarded
// unchanged.
func readCommand(r *bufio.Reader) (command, error) {
	line, err := readLine(r)
	if err != nil {
		return command{}, err
	}
	if line[0] != '*' {
		return inlineCommand(line), nil
	}
	n, err := parseLen(line, maxElements)
	if err != nil || n < 1 {
		return command{raw: line}, err
	}
	raw := line
	words := make([]string, 0, n)
	for i := 0; i < n; i++ {
		h, err := readLine(r)
		if err != nil {
			return command{}, err
		}
		size, err := parseLen(h, maxBulkLen)
		if err != nil || h[0] != '$' || size < 0 {
			return command{}, fmt.Errorf("faultproxy: request element %q is not a bulk string", h)
		}
		p, err := readPayload(r, size)
		if err != nil {
			return command{}, err
		}
		raw = append(append(raw, h...), p...)
		words = append(words, string(p[:size]))
	}
	return command{name: strings.ToUpper(words[0]), args: words[1:], raw: raw}, nil
}

// inlineCommand splits an inline request line.
func inlineCommand(line []byte) command {
	words := strings.Fields(string(line))
	if len(words) == 0 {
		return command{raw: line}
	}
	return command{name: strings.ToUpper(words[0]), args: words[1:], raw: line}
}

// reply is one whole server reply.
type reply struct {
	raw  []byte
	push bool // a RESP3 push message, out-of-band
}

// readReply reads one whole reply of any RESP2 or RESP3 type; an
// attribute ("|") is read together with the reply it precedes. RESP3
// streamed strings and aggregates ("$?", "*?"), which Redis does not
// send, are not supported.
func readReply(r *bufio.Reader) (reply, error) {
	kind, raw, err := readValue(r, nil, 0)
	if err != nil {
		return reply{}, err
	}
	return reply{raw: raw, push: kind == '>'}, nil
}

// readValue appends one RESP value to raw and returns its type byte; for
// an attribute, it reads the value that follows and returns that value's
// type.
func readValue(r *bufio.Reader, raw []byte, depth int) (byte, []byte, error) {
	if depth > maxDepth {
		return 0, raw, errors.New("faultproxy: reply nested too deep")
	}
	line, err := readLine(r)
	if err != nil {
		return 0, raw, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return 0, raw, fmt.Errorf("faultproxy: bad reply line %q", line)
	}
	raw = append(raw, line...)
	kind := line[0]
	switch kind {
	case '+', '-', ':', '_', ',', '#', '(':
		return kind, raw, nil
	case '$', '!', '=':
		n, err := parseLen(line, maxBulkLen)
		if err != nil || n < 0 {
			return kind, raw, err
		}
		p, err := readPayload(r, n)
		return kind, append(raw, p...), err
	case '*', '~', '>', '%', '|':
		return readAggregate(r, raw, line, depth)
	}
	return 0, raw, fmt.Errorf("faultproxy: unknown reply type %q", line)
}

// readAggregate reads the elements of the aggregate whose header line
// (already in raw) is line.
func readAggregate(r *bufio.Reader, raw, line []byte, depth int) (byte, []byte, error) {
	kind := line[0]
	n, err := parseLen(line, maxElements)
	if err != nil {
		return kind, raw, err
	}
	if kind == '%' || kind == '|' {
		n *= 2 // maps and attributes hold key-value pairs
	}
	for i := 0; i < n; i++ {
		if _, raw, err = readValue(r, raw, depth+1); err != nil {
			return kind, raw, err
		}
	}
	if kind == '|' {
		return readValue(r, raw, depth+1)
	}
	return kind, raw, nil
}

// readLine reads through the next '\n', which the line returned keeps.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadBytes('\n')
	if err == io.EOF && len(line) > 0 {
		err = io.ErrUnexpectedEOF
	}
	return line, err
}

// parseLen parses the length or count after a line's type byte: -1 (null)
// through limit.
func parseLen(line []byte, limit int) (int, error) {
	s := strings.TrimSuffix(strings.TrimSuffix(string(line[1:]), "\n"), "\r")
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 || n > limit {
		return 0, fmt.Errorf("faultproxy: bad length in %q", line)
	}
	return n, nil
}

// readPayload reads n bytes and the CRLF after them, and returns both.
func readPayload(r *bufio.Reader, n int) ([]byte, error) {
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if buf[n] != '\r' || buf[n+1] != '\n' {
		return nil, errors.New("faultproxy: bulk string not followed by CRLF")
	}
	return buf, nil
}
