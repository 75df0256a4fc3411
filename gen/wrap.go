package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"slices"
	"strings"
)

// lineWidth is the longest line of a generated file (a test holds every
// file Generate writes to it).
const lineWidth = 150

// wrapWidth is the width a line longer than lineWidth is broken to, where
// it has the breaks: its pieces read as one block.
const wrapWidth = 100

// wrapStyle is how the lines of one language break when they are longer
// than lineWidth. A comment line breaks between words, each piece after
// the same marker and indentation. A line of code breaks after an
// operator or a comma, never inside a string unless nothing else fits:
// the break goes at the outermost bracket level that has one in the
// second half of the room, after a logical operator or comma rather than
// a concatenation, a comparison, arithmetic, then an assignment, as late
// as fits; every continuation line is indented by cont past the line's
// own indentation. A string split in two is joined by concat. Breaking
// after an operator keeps Lua from reading a new line as a call.
type wrapStyle struct {
	comment string         // the line comment marker
	quotes  string         // the characters that open a string
	concat  string         // joins the two halves of a split string
	cont    string         // the indentation of a continuation line
	ops     map[string]int // the operators a line breaks after, by preference
}

// breakOps are the infix operators of Lua and Go a line breaks after, by
// preference (lower first); a comma ranks with the logical operators.
var breakOps = map[string]int{
	"and": 1, "or": 1, "&&": 1, "||": 1,
	"..": 2,
	"==": 3, "~=": 3, "!=": 3, "<=": 3, ">=": 3, "<": 3, ">": 3,
	"+": 4, "-": 4,
	"*": 5, "/": 5, "%": 5,
	"=": 6, ":=": 6,
}

// stringBreak ranks a break inside a string below every other.
const stringBreak = 9

var (
	luaWrap = wrapStyle{comment: "--", quotes: `'"`, concat: "..", cont: "    ", ops: breakOps}
	goWrap  = wrapStyle{comment: "//", quotes: "\"`", concat: "+", cont: "\t", ops: breakOps}
)

// wrap breaks every line of src longer than lineWidth.
func (st wrapStyle) wrap(src []byte) []byte {
	lines := strings.Split(string(src), "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, st.wrapLine(l)...)
	}
	return []byte(strings.Join(out, "\n"))
}

// wrapLine breaks one line into lines of at most lineWidth, where it can.
func (st wrapStyle) wrapLine(line string) []string {
	if len(line) <= lineWidth {
		return []string{line}
	}
	body := strings.TrimLeft(line, " \t")
	indent := line[:len(line)-len(body)]
	if strings.HasPrefix(body, st.comment) {
		return wrapComment(indent, body, st.comment)
	}
	var out []string
	for cur := indent; ; cur = indent + st.cont {
		n := len(cur) + len(body)
		if n <= wrapWidth || out == nil && n <= lineWidth {
			return append(out, cur+body)
		}
		// A piece that fits breaks again only where a break reads well.
		head, rest, ok := st.split(body, wrapWidth-len(cur), lineWidth-len(cur), n <= lineWidth)
		if !ok {
			return append(out, cur+body)
		}
		out = append(out, cur+head)
		body = rest
	}
}

// wrapComment breaks a comment line between words.
func wrapComment(indent, body, marker string) []string {
	text := strings.TrimLeft(body[len(marker):], " ")
	prefix := indent + body[:len(body)-len(text)]
	var out []string
	line := prefix
	for _, w := range strings.Fields(text) {
		if line != prefix && len(line)+1+len(w) > wrapWidth {
			out = append(out, line)
			line = prefix
		}
		if line != prefix {
			line += " "
		}
		line += w
	}
	return append(out, line)
}

// breakAt is a place a line of code may break: the rest begins at at.
type breakAt struct {
	at, depth, rank int
	quote           byte // a break inside a string opened by quote; 0 if none
}

// split breaks body at its best place (see wrapStyle), the first line
// fitting in room, ideally in narrow: the first line, then the rest.
// strict refuses a break inside a string or one that leaves a short line.
func (st wrapStyle) split(body string, narrow, room int, strict bool) (head, rest string, ok bool) {
	// A break scores, lower first: whether it leaves a short line (its
	// first a third of narrow, the rest a fifth), its depth, its rank, whether the line is wider
	// than narrow, then the latest that fits in narrow or else the
	// earliest.
	var best *breakAt
	var bestScore [5]int
	for _, b := range st.breaks(body) {
		n := st.headLen(body, b)
		if n > room || b.at >= len(body) {
			continue
		}
		wide := boolInt(n > narrow)
		short := n < narrow/3 || len(body)-b.at < narrow/5
		if strict && (short || b.quote != 0) {
			continue
		}
		sc := [5]int{boolInt(short), b.depth, b.rank, wide, b.at * (2*wide - 1)}
		if best == nil || slices.Compare(sc[:], bestScore[:]) < 0 {
			best, bestScore = &b, sc
		}
	}
	if best == nil {
		return "", "", false
	}
	if best.quote != 0 {
		q := string(best.quote)
		return body[:best.at] + q + " " + st.concat, q + body[best.at:], true
	}
	return strings.TrimRight(body[:best.at], " "), body[best.at:], true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// headLen is the length of the first line of body broken at b.
func (st wrapStyle) headLen(body string, b breakAt) int {
	if b.quote != 0 {
		return b.at + 2 + len(st.concat)
	}
	return len(strings.TrimRight(body[:b.at], " "))
}

// breaks lists the places body may break, up to a trailing comment.
func (st wrapStyle) breaks(body string) []breakAt {
	var out []breakAt
	depth := 0
	var quote byte
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case quote != 0:
			switch {
			case c == '\\' && quote != '`':
				i++
			case c == quote:
				quote = 0
			case c == ' ':
				out = append(out, breakAt{at: i + 1, depth: depth, rank: stringBreak, quote: quote})
			}
		case strings.IndexByte(st.quotes, c) >= 0:
			quote = c
		case strings.HasPrefix(body[i:], st.comment):
			return out
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && strings.HasPrefix(body[i+1:], " "):
			out = append(out, breakAt{at: i + 2, depth: depth, rank: 1})
		case c == ' ':
			op, _, found := strings.Cut(body[i+1:], " ")
			if rank, known := st.ops[op]; found && known {
				out = append(out, breakAt{at: i + len(op) + 2, depth: depth, rank: rank})
			}
		}
	}
	return out
}

// luaSource is a script w holds, its long lines broken, without a final
// newline.
func luaSource(w *writer) []byte { return luaWrap.wrap(bytes.TrimRight(w.bytes(), "\n")) }

// formatGo gofmts generated Go with its long lines broken, or says which
// file would not compile. gofmt keeps the breaks but may indent a
// continuation line further, so the two alternate until no line is
// longer than lineWidth, or a break changes nothing.
func formatGo(w writer, what string) ([]byte, error) {
	src := w.bytes()
	for range 3 {
		out, err := format.Source(src)
		if err != nil {
			return nil, fmt.Errorf("gofmt of %s: %v\n%s", what, err, src)
		}
		if src = goWrap.wrap(out); bytes.Equal(src, out) {
			return out, nil
		}
	}
	return format.Source(src)
}
