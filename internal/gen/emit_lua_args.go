package gen

import (
	"fmt"
	"strings"
)

// A decision script checks its arguments twice over, so that the common
// call pays little for the checks and every call is checked exactly.
//
// luaFastArgs checks the common call: every argument given, each integer
// in plain decimal digits (the key's parameters without leading zeros,
// as the key spells them), within its domain. It reads each integer with
// one pattern match and Lua's own conversion (a string in arithmetic),
// compares the key's tail with the parameters' own strings rather than
// formatting numbers, and calls no helper function. A call it does not
// accept goes to luaExactArgs, the checks in full, in the order the
// error messages follow: they refuse the call with the message every
// target gives, or accept it (a leading zero, "-0"). Either way the
// locals hold the same values.

// luaDeclareArgs declares the locals the arguments are read into, and
// checked, which says whether luaFastArgs accepted them.
func luaDeclareArgs(w *writer, sp *Spec, a *Algorithm) {
	ints, strs, _ := luaArgs(sp, a, nil)
	var names []string
	for _, in := range ints {
		names = append(names, in.Name)
	}
	names = append(names, "force")
	for _, in := range strs {
		names = append(names, luaName(in.Name))
	}
	for _, p := range a.Params {
		names = append(names, luaName(p.Name))
	}
	w.line("local %s", strings.Join(names, ", "))
	w.line("local checked = false")
}

// luaFastArgs checks the common call (see above), with a break out of
// its block at the first check that fails.
func luaFastArgs(w *writer, sp *Spec, a *Algorithm) {
	ints, strs, firstParam := luaArgs(sp, a, nil)
	w.line("-- arguments: the common call (every argument given, each integer in")
	w.line("-- decimal digits, the key's parameters as the key spells them) is checked")
	w.line("-- here at little cost; any other call goes to the exact checks below")
	luaDeclareArgs(w, sp, a)
	w.line("repeat")
	w.line("  local find, s = string.find")
	w.line("  if #ARGV ~= %d or #KEYS ~= %d then break end", firstParam+len(a.Params)-1, len(a.States))
	for _, p := range a.Params {
		arg := fmt.Sprintf("ARGV[%d]", firstParam+p.Index)
		if namedByKey(a, p) {
			w.line("  local %s = %s -- the key spells it so", luaKeyArg(p), arg)
			arg = luaKeyArg(p)
		}
		luaFastInt(w, arg, luaName(p.Name), p.Min, luaExact.print(&Lit{V: p.Max}))
	}
	h := &luaHoister{}
	d := luaDialect(h.hoist)
	for _, r := range a.Requires {
		cond := d.print(r.Cond)
		h.flush(w, "  ")
		w.line("  if not (%s) then break end", cond)
	}
	for _, c := range a.Checks {
		cond := d.print(c.Cond)
		h.flush(w, "  ")
		w.line("  if not (%s) then break end", cond)
	}
	luaFastKeys(w, a)
	for i, in := range ints {
		if in.Name != "now" {
			luaFastInput(w, fmt.Sprintf("ARGV[%d]", i+1), in)
		}
	}
	w.line("  s = ARGV[%d]", len(ints)+1)
	w.line("  if s == '0' then force = false elseif s == '1' then force = true else break end")
	for i, in := range strs {
		w.line("  s = ARGV[%d]", len(ints)+2+i)
		w.line("  if #s > %d then break end", in.MaxLen)
		w.line("  %s = s", luaName(in.Name))
	}
	for i, in := range ints {
		if in.Name == "now" { // last: it may call TIME
			luaFastNow(w, fmt.Sprintf("ARGV[%d]", i+1), in)
		}
	}
	w.line("  checked = true")
	w.line("until true")
}

// namedByKey reports whether a key of a names p: the key spells it, and
// the fast path compares the argument's string with the key's.
func namedByKey(a *Algorithm, p *Param) bool {
	for _, s := range a.States {
		for _, kp := range s.KeyParams() {
			if kp == p {
				return true
			}
		}
	}
	return false
}

// luaFastInt reads the integer in arg into name, within [lo, hi]: its
// shortest decimal form, when lo is at least 1 (a longer one than 17
// digits is then above hi), or else decimal digits, at most 17 of them.
func luaFastInt(w *writer, arg, name string, lo int64, hi string) {
	w.line("  s = %s", arg)
	if lo >= 1 {
		w.line("  if not find(s, '^[1-9]%%d*$') then break end")
	} else {
		w.line("  if #s > 17 or not find(s, '^%%d+$') then break end")
	}
	w.line("  %s = s + 0", name)
	w.line("  if %s then break end", luaRange(name, lo, hi))
}

// luaKeyArg names the local holding the argument of a parameter that a
// key names, as given.
func luaKeyArg(p *Param) string { return luaName(p.Name) + "__s" }

// luaHoister collects the locals a dialect hoists (see luaDialect).
type luaHoister struct {
	lines []string
	n     int
}

// hoist makes s a local, and returns its name.
func (h *luaHoister) hoist(s string) string {
	h.n++
	name := fmt.Sprintf("h__%d", h.n)
	h.lines = append(h.lines, "local "+name+" = "+s)
	return name
}

// flush writes the locals hoisted since the last flush, at ind.
func (h *luaHoister) flush(w *writer, ind string) {
	for _, l := range h.lines {
		w.line("%s%s", ind, l)
	}
	h.lines = h.lines[:0]
}

// luaFastInput reads a per-call integer input other than now_ms (cost);
// "1" and "0" (a peek), the most common, without a pattern. Its domain
// holds both.
func luaFastInput(w *writer, arg string, in *Input) {
	max := luaExact.print(&Lit{V: in.Max, Name: in.MaxName})
	w.line("  s = %s", arg)
	w.line("  if s == '1' then")
	w.line("    %s = 1", in.Name)
	w.line("  elseif s == '0' then")
	w.line("    %s = 0", in.Name)
	w.line("  elseif #s <= 17 and find(s, '^%%d+$') then")
	w.line("    %s = s + 0", in.Name)
	w.line("    if %s then break end", luaRange(in.Name, in.Min, max))
	w.line("  else")
	w.line("    break")
	w.line("  end")
}

// luaFastNow reads now_ms, or the server's clock for an empty now_ms.
func luaFastNow(w *writer, arg string, in *Input) {
	w.line("  s = %s", arg)
	w.line("  if s == '' then -- the Redis server's clock")
	luaServerClock(w, "    ")
	w.line("  elseif #s <= 17 and find(s, '^%%d+$') then")
	w.line("    now = s + 0")
	w.line("  else")
	w.line("    break")
	w.line("  end")
	w.line("  if %s then break end", luaRange("now", in.Min, luaExact.print(&Lit{V: in.Max, Name: in.MaxName})))
}

// luaRange is the condition that name, read from decimal digits (so at
// least 0), is outside [lo, hi].
func luaRange(name string, lo int64, hi string) string {
	if lo > 0 {
		return fmt.Sprintf("%s < %d or %s > %s", name, lo, name, hi)
	}
	return fmt.Sprintf("%s > %s", name, hi)
}

// luaServerClock sets now to the Redis server's TIME, in ms.
func luaServerClock(w *writer, ind string) {
	w.line("%slocal t = redis.call('TIME')", ind)
	w.line("%slocal us = t[2] + 0", ind)
	w.line("%snow = t[1] * 1000 + (us - us %% 1000) / 1000", ind)
}

// luaFastKeys checks the keys of the common call: KEYS[1] is '{', a key
// not beginning with '}', then its tail, which names the parameters as
// their arguments spell them; every other key is the same key with its
// own tail.
func luaFastKeys(w *writer, a *Algorithm) {
	w.line("  local k = KEYS[1]")
	w.line("  local tail = %s", luaRawTail(a.States[0]))
	w.line("  local at = #k - #tail + 1")
	w.line("  if at < 3 or find(k, tail, at, true) ~= at then break end")
	w.line("  local b1, b2 = string.byte(k, 1, 2)")
	w.line("  if b1 ~= 123 or b2 == 125 then break end")
	first := keySuffix(a.States[0], func(p *Param) string { return "<" + p.Name + ">" })
	for i, s := range a.States[1:] {
		suffix := keySuffix(s, func(p *Param) string { return "<" + p.Name + ">" })
		if more, ok := strings.CutPrefix(suffix, first); ok && !strings.Contains(more, "<") {
			w.line("  if KEYS[%d] ~= k .. %s then break end", i+2, luaStr(more))
		} else {
			w.line("  if KEYS[%d] ~= string.sub(k, 1, at - 1) .. %s then break end", i+2, luaRawTail(s))
		}
	}
}

// luaRawTail is the Lua expression of what follows a key's hash tag,
// from its closing brace, each parameter as its argument spells it (its
// luaKeyArg).
func luaRawTail(s *State) string {
	var parts []string
	text := "}"
	for _, p := range s.KeyParts {
		if p.Param == nil {
			text += p.Text
			continue
		}
		parts = append(parts, luaStr(text), luaKeyArg(p.Param))
		text = ""
	}
	if text != "" {
		parts = append(parts, luaStr(text))
	}
	return strings.Join(parts, " .. ")
}

// luaExactArgs is the block that checks a call luaFastArgs did not
// accept, exactly as the scripts always have (luaArgCount, luaParams,
// luaKeys, luaInputs), into the same locals; it declares the helpers and
// constants it uses, which the common path never makes.
func luaExactArgs(sp *Spec, a *Algorithm) string {
	ints, strs, firstParam := luaArgs(sp, a, nil)
	body := writer{assign: true}
	luaErrors(&body, "", false)
	body.line("")
	luaArgCount(&body, sp, a, nil)
	body.line("")
	luaParams(&body, a, firstParam)
	body.line("")
	luaKeys(&body, a, "")
	body.line("")
	luaInputs(&body, ints, strs, true)
	var block writer
	luaHelpersFor(&block, sp, body.b.String(), map[string]bool{"KEYS": true})
	block.raw(body.b.String())
	var w writer
	w.line("-- the exact checks of any other call: they refuse it with the message")
	w.line("-- every target gives, or accept it")
	w.line("if not checked then")
	w.raw(luaIndentText(block.b.String(), "  "))
	w.line("end")
	return w.b.String()
}
