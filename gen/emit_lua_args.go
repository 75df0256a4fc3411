package gen

import (
	"fmt"
	"slices"
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
// its block at the first check that fails. With memo (in the Functions
// library), the parameters are looked up first among those found valid
// by earlier calls, by their arguments (luaMemo): a library's locals
// live as long as it is loaded, and whether arguments are valid
// parameters depends on those strings alone.
func luaFastArgs(w *writer, sp *Spec, a *Algorithm, memo string) {
	ints, strs, firstParam := luaArgs(sp, a, nil)
	w.line("-- arguments: the common call (every argument given, each integer in")
	w.line("-- decimal digits, the key's parameters as the key spells them) is checked")
	w.line("-- here at little cost; any other call goes to the exact checks below")
	luaDeclareArgs(w, sp, a)
	w.line("repeat")
	w.line("  local find, s = string.find")
	w.line("  if #ARGV ~= %d or #KEYS ~= %d and #KEYS ~= %d then break end", firstParam+len(a.Params)-1, len(a.States), len(a.States)+1)
	if memo == "" {
		w.line("  local tail")
		luaFastParams(w, a, firstParam, "  ")
	} else {
		luaMemoLookup(w, a, firstParam, memo)
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

// luaFastParams checks the parameters of the common call, at ind, and
// sets tail (declared before) to the tail of KEYS[1], which names the
// key's parameters as given: each parameter no key names read with its
// own pattern, those the keys name with one pattern over tail, then
// their joint bounds.
func luaFastParams(w *writer, a *Algorithm, firstParam int, ind string) {
	var named []*Param
	for _, p := range a.Params {
		arg := fmt.Sprintf("ARGV[%d]", firstParam+p.Index)
		if namedByKey(a, p) {
			w.line("%slocal %s = %s", ind, luaKeyArg(p), arg)
			named = append(named, p)
			continue
		}
		luaFastInt(w, arg, luaName(p.Name), p.Min, luaExact.print(&Lit{V: p.Max}), ind)
	}
	w.line("%stail = %s", ind, luaKeyTail(a.States[0], "", luaKeyArg))
	w.line("%sif not find(tail, %s) then break end", ind, luaStr(luaTailPattern(a.States[0])))
	for _, p := range named { // decimal digits, so at least 0
		n := luaName(p.Name)
		w.line("%s%s = %s + 0", ind, n, luaKeyArg(p))
		if p.Min < 1 { // shortest: no leading zero (then its 17 digits bound it too)
			w.line("%sif #%s > 1 and %s < 10 ^ (#%s - 1) then break end", ind, luaKeyArg(p), n, luaKeyArg(p))
		}
		w.line("%sif %s then break end", ind, luaRange(n, p.Min, min(p.Min, 1), luaExact.print(&Lit{V: p.Max})))
	}
	h := &luaHoister{}
	d := luaDialect(h.hoist)
	for _, c := range append(slices.Clone(a.Requires), luaChecksAsRequires(a)...) {
		cond := d.print(c.Cond)
		h.flush(w, ind)
		w.line("%sif not (%s) then break end", ind, cond)
	}
}

// luaChecksAsRequires are the algorithm's runtime checks (the bound
// analysis's), as requirements.
func luaChecksAsRequires(a *Algorithm) []*Require {
	var out []*Require
	for _, c := range a.Checks {
		out = append(out, &Require{Cond: c.Cond, Doc: c.Msg})
	}
	return out
}

// luaTailPattern is the pattern of a key's tail whose parameters are in
// decimal digits, without a leading zero where the parameter is at least
// 1 (one that may be 0 is checked for it after: a pattern cannot say
// "0, or no leading zero").
func luaTailPattern(s *State) string {
	pat := "^%}"
	for _, p := range s.KeyParts {
		if p.Param != nil && p.Param.Min >= 1 {
			pat += "[1-9]%d*"
			continue
		}
		if p.Param != nil {
			pat += "%d+"
			continue
		}
		for _, c := range p.Text {
			if strings.ContainsRune("^$()%.[]*+-?", c) {
				pat += "%"
			}
			pat += string(c)
		}
	}
	return pat + "$"
}

// luaMemoLookup looks the parameters up in memo (luaMemo) by their
// arguments, and checks them at a miss (luaFastParams), remembering
// them once found valid.
func luaMemoLookup(w *writer, a *Algorithm, firstParam int, memo string) {
	var args, vals []string
	for _, p := range a.Params {
		args = append(args, fmt.Sprintf("ARGV[%d]", firstParam+p.Index))
		vals = append(vals, luaName(p.Name))
	}
	w.line("  -- the parameters found valid by earlier calls, by their arguments")
	w.line("  local p = %s[%s]", memo, args[0])
	for _, arg := range args[1:] {
		w.line("  p = p and p[%s]", arg)
	}
	w.line("  local tail")
	w.line("  if p then")
	w.line("    %s, tail = %s, p[%d]", strings.Join(vals, ", "), luaMemoFields(len(vals)), len(vals)+1)
	w.line("  else")
	luaFastParams(w, a, firstParam, "    ")
	w.line("    %s__n = %s__n + 1", memo, memo)
	w.line("    if %s__n > %d then -- a bounded memory: forget them all", memo, luaMemoSize)
	w.line("      %s, %s__n = {}, 1", memo, memo)
	w.line("    end")
	w.line("    local q = %s", memo)
	for _, arg := range args[:len(args)-1] {
		w.line("    p = q[%s]", arg)
		w.line("    if p == nil then")
		w.line("      p = {}")
		w.line("      q[%s] = p", arg)
		w.line("    end")
		w.line("    q = p")
	}
	w.line("    q[%s] = {%s, tail}", args[len(args)-1], strings.Join(vals, ", "))
	w.line("  end")
}

// luaMemoSize is the most parameter sets a library function remembers.
const luaMemoSize = 1000

// luaMemoFields is p[1], p[2], ..., p[n].
func luaMemoFields(n int) string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("p[%d]", i))
	}
	return strings.Join(out, ", ")
}

// luaMemo names the memory of a's function in the Functions library,
// and declares it (a library's local, before its functions).
func luaMemo(a *Algorithm) (name, decl string) {
	name = luaName(a.Name) + "__valid"
	return name, fmt.Sprintf("-- the parameters of %s found valid, by their arguments\nlocal %s, %s__n = {}, 0\n", a.Name, name, name)
}

// namedByKey reports whether a's keys name p (every key of an algorithm
// names the same parameters: the loader checks it): the key spells it,
// and the fast path compares the argument's string with the key's.
func namedByKey(a *Algorithm, p *Param) bool { return slices.Contains(a.States[0].KeyParams(), p) }

// luaFastInt reads the integer in arg into name, within [lo, hi], at
// ind: its shortest decimal form, when lo is at least 1 (a longer one
// than 17 digits is then above hi), or else decimal digits, at most 17
// of them.
func luaFastInt(w *writer, arg, name string, lo int64, hi, ind string) {
	w.line("%ss = %s", ind, arg)
	least := int64(0)
	if lo >= 1 {
		least = 1
		w.line("%sif not find(s, '^[1-9]%%d*$') then break end", ind)
	} else {
		w.line("%sif #s > 17 or not find(s, '^%%d+$') then break end", ind)
	}
	w.line("%s%s = s + 0", ind, name)
	w.line("%sif %s then break end", ind, luaRange(name, lo, least, hi))
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
	w.line("    if %s then break end", luaRange(in.Name, in.Min, 0, max))
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
	w.line("  if %s then break end", luaRange("now", in.Min, 0, luaExact.print(&Lit{V: in.Max, Name: in.MaxName})))
}

// luaRange is the condition that name, read from decimal digits (so at
// least least: 1 without a leading zero, else 0), is outside [lo, hi].
func luaRange(name string, lo, least int64, hi string) string {
	if lo > least {
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
			w.line("  if KEYS[%d] ~= string.sub(k, 1, at - 1) .. %s then break end", i+2, luaKeyTail(s, "", luaKeyArg))
		}
	}
}

// luaExactArgs is the block that checks a call luaFastArgs did not
// accept, exactly as the scripts always have (luaArgCount, luaParams,
// luaKeys, luaInputs), into the same locals; it declares the helpers and
// constants it uses, which the common path never makes.
func luaExactArgs(sp *Spec, a *Algorithm) string {
	ints, strs, firstParam := luaArgs(sp, a, nil)
	body := writer{assign: true}
	luaErrors(&body, "")
	body.line("")
	luaArgCount(&body, sp, a, nil)
	body.line("")
	luaParams(&body, a, firstParam)
	body.line("")
	luaKeys(&body, a, "", true)
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
