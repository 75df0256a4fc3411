package limitcall

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
)

// A composed script decides one policy (docs/semantics.md, "Policies"):
// the pieces of its library's policy script (or holds script, for a
// holding policy) that the policy's limits need, in their order there,
// each limit made once by its algorithm's maker with its parameters
// written in (checked when the policy was made, as the scripts check
// them), then the script's driver. It takes KEYS as the library's script
// does, and ARGV up to the limits alone: now_ms, cost and force (a
// holding policy's: now_ms, cost, op, id, hold_ms). The library's script
// marks its pieces (a line "--: name needs..." begins one; "--: -" ends
// it), so that a composed script is made of generated code alone.

// pieceMark begins a line marking a piece of a policy script.
const pieceMark = "--: "

// piece is a part of a policy script a composed script may take.
type piece struct {
	name, source string
	needs        []string
}

// scriptPieces are the pieces of a policy script, in order.
type scriptPieces struct {
	list  []piece
	index map[string]int
}

// piecesOf splits src, a policy script, into its pieces.
func piecesOf(src string) *scriptPieces {
	ps := &scriptPieces{index: map[string]int{}}
	var cur *piece
	var b strings.Builder
	done := func() {
		if cur != nil {
			cur.source = b.String()
			ps.index[cur.name] = len(ps.list)
			ps.list = append(ps.list, *cur)
		}
		cur = nil
		b.Reset()
	}
	for line := range strings.Lines(src) {
		mark, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), pieceMark)
		switch {
		case ok && mark == "-":
			done()
		case ok:
			done()
			f := strings.Fields(mark)
			cur = &piece{name: f[0], needs: f[1:]}
		case cur != nil:
			b.WriteString(line)
		}
	}
	done()
	return ps
}

// pieceCache holds each policy script's pieces, by its SHA1.
var pieceCache sync.Map

// piecesOfScript are s's pieces, split once.
func piecesOfScript(s kit.Script) *scriptPieces {
	if ps, ok := pieceCache.Load(s.SHA1); ok {
		return ps.(*scriptPieces)
	}
	ps, _ := pieceCache.LoadOrStore(s.SHA1, piecesOf(s.Source))
	return ps.(*scriptPieces)
}

// composedCache holds the scripts composed so far, by what they compose
// (composedKey): a service decides by a few policies, so that each is
// composed once. It stops growing at composedMax scripts; a policy
// beyond is composed at each call that needs it.
var (
	composedCache sync.Map
	composedCount int
	composedMu    sync.Mutex
)

// composedMax is the most composed scripts remembered.
const composedMax = 1024

// Composed is the script composed for p (see above): its source and SHA1.
// It refuses what NewPolicyTemplate refuses.
func Composed(p *limitspec.Policy) (kit.Script, error) {
	t, err := NewPolicyTemplate(p)
	if err != nil {
		return kit.Script{}, err
	}
	return t.Composed(p), nil
}

// Composed is the script composed for p, whose template t is (see
// above).
func (t *PolicyTemplate) Composed(p *limitspec.Policy) kit.Script {
	key := composedKey(t, p)
	if s, ok := composedCache.Load(key); ok {
		return s.(kit.Script)
	}
	s := compose(t, p)
	composedMu.Lock()
	defer composedMu.Unlock()
	if composedCount < composedMax {
		if _, loaded := composedCache.LoadOrStore(key, s); !loaded {
			composedCount++
		}
	}
	return s
}

// composedKey names what a composed script decides: its library's
// script, the policy's name, and its limits as the script takes them.
func composedKey(t *PolicyTemplate, p *limitspec.Policy) string {
	from := t.Library.Policy
	if p.Holds() {
		from = t.Library.Holds
	}
	return from.SHA1 + "\x00" + strings.Join(t.Limits, "\x00")
}

// compose makes the script composed for p, of template t.
func compose(t *PolicyTemplate, p *limitspec.Policy) kit.Script {
	from := t.Library.Policy
	if p.Holds() {
		from = t.Library.Holds
	}
	ps := piecesOfScript(from)
	limits, makers := composedLimits(t, p)
	want := map[string]bool{}
	var need func(string)
	need = func(name string) {
		if want[name] {
			return
		}
		want[name] = true
		if i, ok := ps.index[name]; ok {
			for _, n := range ps.list[i].needs {
				need(n)
			}
		}
	}
	if len(p.Limits()) == 1 {
		want["binding"] = true // a policy of one limit binds by it: the driver never calls binding
	}
	need("driver")
	delete(want, "binding")
	if len(p.Limits()) > 1 {
		need("binding")
	}
	for _, m := range makers {
		need(m)
	}
	var b strings.Builder
	b.WriteString("-- composed by package redislimit for the policy " + p.Name() + " from " + from.Name + ".lua\n")
	for _, pc := range ps.list {
		if want[pc.name] && pc.name != "driver" {
			b.WriteString(pc.source)
		}
	}
	b.WriteString(limits)
	if i, ok := ps.index["driver"]; ok {
		b.WriteString(ps.list[i].source)
	}
	src := strings.TrimRight(b.String(), "\n")
	sum := sha1.Sum([]byte(src))
	return kit.Script{Name: from.Name, Source: src, SHA1: hex.EncodeToString(sum[:])}
}

// composedLimits is the Lua of a composed script's limits: its errors'
// prefix, every limit made by its algorithm's maker (LIMITS), their
// names and holds keys (HOLDS) and the number of state keys (NK); and
// the makers it calls.
func composedLimits(t *PolicyTemplate, p *limitspec.Policy) (string, []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "local ALG = %s\n", luaQuote(p.Name()+": "))
	b.WriteString("local LIMITS = {\n")
	var makers, names, hh, he []string
	key, arg := 1, 0
	for i, pl := range p.Limits() {
		alg := pl.Limit.Algorithm()
		maker := "make_" + strings.ReplaceAll(alg.String(), ".", "__")
		makers = append(makers, maker)
		n, _ := strconv.Atoi(t.Limits[arg+2])
		params := t.Limits[arg+3 : arg+3+n]
		arg += 3 + n
		var keys []string
		for key <= len(t.Of) && t.Of[key-1] == i && !holdsTail(t.Tails[key-1]) {
			keys = append(keys, fmt.Sprintf("KEYS[%d]", key))
			key++
		}
		if p.Holds() {
			hh, he = append(hh, fmt.Sprintf("KEYS[%d]", key)), append(he, fmt.Sprintf("KEYS[%d]", key+1))
			key += 2
		} else {
			hh, he = append(hh, "false"), append(he, "false")
		}
		names = append(names, luaQuote(pl.Name))
		prefix := luaQuote(p.Name() + "." + pl.Name + ": " + alg.String() + ": ")
		keysOf := "{" + strings.Join(keys, ", ") + "}"
		if len(keys) > 0 && keys[0] == "KEYS[1]" {
			keysOf = "KEYS" // the limit's keys come first: no table of their own
		}
		fmt.Fprintf(&b, "  %s(%s, %s", maker, keysOf, prefix)
		for _, v := range params {
			b.WriteString(", " + v)
		}
		b.WriteString("),\n")
	}
	b.WriteString("}\n")
	var holds []string
	for i := range names {
		holds = append(holds, names[i], hh[i], he[i])
	}
	fmt.Fprintf(&b, "local HOLDS, NK = {%s}, %d\n", strings.Join(holds, ", "), stateKeys(t))
	return b.String(), makers
}

// stateKeys is how many of t's keys are limits' state keys.
func stateKeys(t *PolicyTemplate) int {
	n := 0
	for _, tail := range t.Tails {
		if !holdsTail(tail) {
			n++
		}
	}
	return n
}

// holdsTail reports whether a key's tail is a holds key's (a holding
// policy's limit's hash or sorted set of holds).
func holdsTail(tail string) bool {
	return strings.HasSuffix(tail, ":hh") || strings.HasSuffix(tail, ":hz")
}

// luaQuote is s as a Lua string literal; names and algorithms hold no
// quote nor backslash, but s is escaped all the same.
func luaQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}
