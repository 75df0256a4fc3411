package gen

import (
	"fmt"
	"strings"
)

// A zset is never read whole by a decision: its aggregates are computed
// from the ranks of their score range and a few entries (see index.go).

// luaZsetUsed reports whether the script touches the zset s: it reads its
// entries, or (a decision) writes it.
func luaZsetUsed(a *Algorithm, v *View, used usage, s *State) bool {
	return s.Kind == ZSet && (used.entries[s] || v == nil && writtenStates(a.Body)[s])
}

// luaZsetRead emits the reading helpers of the zset s, at KEYS[key]: its
// size (whose ZCARD also checks its type), the entry at a rank, and the
// number of entries scored below a bound. A decision reads every entry
// before it writes (see Drop), so the helpers remember what they read:
// each rank and each bound costs one command at most, and a bound at or
// past the newest entry's score none (the newest is read first, for the
// zsets whose adds continue it).
func luaZsetRead(w *writer, s *State, key int) {
	top := "nil -- no newest entry is read"
	if s.GrowsAtEnd() {
		top = "nil -- the newest entry, read below"
	}
	w.text(luaZsetReadText, "{list}", luaName(s.Name), "{key}", fmt.Sprintf("KEYS[%d]", key),
		"{score}", luaName(s.Entry[0].Name), "{top}", top)
	if s.Running != nil {
		luaRunHelpers(w, s)
	}
}

// luaZsetReadText are the helpers of luaZsetRead for the zset {list} at
// {key}, whose score is {score}.
const luaZsetReadText = `local {list}__card = redis.call('ZCARD', {key})
local {list}__top = {top}
-- what this call has read of the set, which it reads before any write:
-- the entries by rank, and the counts below each bound, open and closed
local {list}__ranks, {list}__lt, {list}__le = {}, {}, {}
-- the entry at rank r (0: the oldest), or nil, what is wrong, and the value
local function {list}__at(r)
  local e = {list}__ranks[r]
  if e == nil then
    local raw = redis.call('ZRANGE', {key}, r, r)
    local what, v
    e, what, v = {list}__entry(raw[1])
    if e == nil then
      return nil, what, v
    end
    e.member__ = raw[1]
    {list}__ranks[r] = e
  end
  return e
end
-- the number of entries scored below x, or at most x when closed
local function {list}__below(x, closed)
  local top = {list}__top
  if {list}__card == 0 or top ~= nil and (top.{score} < x or closed and top.{score} == x) then
    return {list}__card
  end
  local known = closed and {list}__le or {list}__lt
  local n = known[x]
  if n == nil then
    n = redis.call('ZCOUNT', {key}, '-inf', closed and string.format('%d', x) or '(' .. string.format('%d', x))
    known[x] = n
  end
  return n
end
`

// luaZsetTop reads the newest entry of each zset whose adds continue it,
// after the clock rule has had its say (a stale zset reads as empty);
// the clock's zset's was read for the rule (luaClock).
func luaZsetTop(w *writer, a *Algorithm, v *View, used usage) {
	if v != nil {
		return
	}
	for i, s := range a.States {
		if !s.GrowsAtEnd() || !writtenStates(a.Body)[s] || a.Clock != nil && a.Clock.State == s {
			continue
		}
		luaReadTop(w, s, i+1)
	}
}

// luaReadTop reads the newest entry of the zset s, at KEYS[key], into
// its top.
func luaReadTop(w *writer, s *State, key int) {
	list := luaName(s.Name)
	w.line("-- the newest entry of %s, which an add continues", keyTemplate(s))
	w.line("if %s__card > 0 then", list)
	w.line("  local bad__what, bad__v")
	w.line("  %s__top, bad__what, bad__v = %s__at(%s__card - 1)", list, list, list)
	luaCorruptCheck(w, list+"__top", key, "  ")
	w.line("end")
}

// luaCorruptCheck returns BADSTATE when the entry read into name is nil.
func luaCorruptCheck(w *writer, name string, key int, ind string) {
	w.line("%sif %s == nil then", ind, name)
	w.line("%s  return %s", ind, luaCorrupt(fmt.Sprintf("KEYS[%d]", key), "bad__what", "bad__v"))
	w.line("%send", ind)
}

// luaZsetAgg computes one aggregate over a zset into name, by index.
func luaZsetAgg(w *writer, a *Algorithm, st aggStep, ind string) {
	ag, plan, name := st.Agg, st.Index, st.Name
	s := ag.It.State
	list, it, key := luaName(s.Name), luaName(ag.It.Name), stateIndex(a, s)+1
	b := plan.bounds
	lo, hi := "0", list+"__card"
	if b.min != nil { // those below min, or at or below an open min
		lo = fmt.Sprintf("%s__below(%s, %v)", list, luaExact.print(b.min), b.minOpen)
	}
	if b.max != nil { // those at or below max, or below an open max
		hi = fmt.Sprintf("%s__below(%s, %v)", list, luaExact.print(b.max), !b.maxOpen)
	}
	in := ind + "  "
	// call reads into local the result of a helper that fails with nil.
	call := func(local, fn string, args ...string) {
		w.line("%slocal %s, bad__what, bad__v = %s__%s(%s)", in, local, list, fn, strings.Join(args, ", "))
		luaCorruptCheck(w, local, key, in)
	}
	w.line("%sdo -- the entries in range are those at ranks [lo, hi)", ind)
	w.line("%slocal lo__, hi__ = %s, %s", in, lo, hi)
	lo__, hi__ := luaLocal("lo__"), luaLocal("hi__")
	count := Expr(&Call{Fn: OpMax, Args: []Expr{&Lit{}, &Binary{Op: OpSub, X: hi__, Y: lo__}}})
	switch {
	case plan.kind == byCount && ag.Fn == Sum:
		if plan.k != 1 {
			count = &Binary{Op: OpMul, X: count, Y: &Lit{V: plan.k}}
		}
		w.line("%s%s = %s", in, name, luaExact.print(&Call{Fn: OpMin, Args: []Expr{count, &Lit{V: ag.Cap}}}))
	case plan.kind == byLast:
		w.line("%sif hi__ > lo__ then", in)
		in += "  "
		call(it, "at", "hi__ - 1")
		w.line("%s%s = %s", in, name, luaExact.print(ag.V))
		w.line("%send", ind+"  ")
	case plan.kind == byCount: // reach: the entry at which the count reaches need
		need := &Call{Fn: OpCeilDiv, Args: []Expr{&Call{Fn: OpMax, Args: []Expr{&Lit{}, ag.N}}, &Lit{V: plan.k}}}
		w.line("%slocal r__ = lo__ + %s", in, luaExact.print(&Call{Fn: OpMax, Args: []Expr{&Lit{}, &Binary{Op: OpSub, X: need, Y: &Lit{V: 1}}}}))
		w.line("%sif r__ < hi__ then", in)
		in += "  "
		call(it, "at", "r__")
		w.line("%s%s = %s", in, name, luaExact.print(ag.R))
		w.line("%send", ind+"  ")
	case ag.Fn == Sum:
		call("sum__", "sum", "lo__", "hi__")
		w.line("%s%s = %s", in, name, luaExact.print(&Call{Fn: OpMin, Args: []Expr{luaLocal("sum__"), &Lit{V: ag.Cap}}}))
	default:
		call(it, "reach", "lo__", "hi__", luaExact.print(ag.N), fmt.Sprint(ag.Cap))
		w.line("%sif %s then", in, it)
		w.line("%s  %s = %s", in, name, luaExact.print(ag.R))
		w.line("%send", in)
	}
	w.line("%send", ind)
}

// luaRunHelpers emits the helpers of a zset that keeps a running sum: the
// sum over the entries at ranks [lo, hi), the difference of two running
// sums, and the first of them at which that sum reaches a value, found by
// a galloping search: ranks lo, lo+1, lo+3, lo+7, ... until one reaches
// it, then a binary search between the last two, so that a value reached
// after k entries costs O(log k) reads and any value O(log n).
func luaRunHelpers(w *writer, s *State) {
	w.text(luaRunHelpersText, "{list}", luaName(s.Name), "{run}", luaName(s.Running.Name),
		"{of}", luaName(s.RunOf.Name), "{of_name}", s.RunOf.Name, "{mod}", runModName)
}

// luaRunHelpersText are the helpers of luaRunHelpers, over the zset
// {list} whose entry field {run} is the running sum of {of} modulo {mod}.
const luaRunHelpersText = `-- the sum of {of_name} over the entries at ranks [lo, hi), the running sum
-- before lo, and the entries at lo and hi - 1; nil, what is wrong and
-- the value if an entry is not one
local function {list}__sum(lo, hi)
  if hi <= lo then
    return 0, 0
  end
  local first, what, v = {list}__at(lo)
  if first == nil then
    return nil, what, v
  end
  local top = first
  if hi - 1 > lo then
    top, what, v = {list}__at(hi - 1)
    if top == nil then
      return nil, what, v
    end
  end
  local base = first.{run} - first.{of}
  return (top.{run} - base) % {mod}, base, first, top
end
-- the first entry at ranks [lo, hi) at which the sum of {of_name} from lo
-- (at most cap) reaches need, false if none; nil, what, value as above
local function {list}__reach(lo, hi, need, cap)
  local total, base, first, top = {list}__sum(lo, hi)
  if total == nil then
    return nil, base, first
  end
  if hi <= lo or (total < cap and total or cap) < need then
    return false
  end
  local s = (first.{run} - base) % {mod}
  if (s < cap and s or cap) >= need then
    return first
  end
  -- the entry sought is at a rank in [a, b]; found is the entry at b
  local a, b, found = lo + 1, hi - 1, top
  local function probe(r)
    local x, what, v = {list}__at(r)
    if x == nil then
      return nil, what, v
    end
    local s = (x.{run} - base) % {mod}
    if (s < cap and s or cap) >= need then
      b, found = r, x
    else
      a = r + 1
    end
    return true
  end
  local step, galloping = 2, true
  while a < b do
    local r = (a + b - (a + b) % 2) / 2
    if galloping then
      r = lo + step - 1
      if r > b - 1 then
        r = b - 1
      end
      step = step * 2
    end
    local ok, what, v = probe(r)
    if ok == nil then
      return nil, what, v
    end
    galloping = galloping and b ~= r
  end
  return found
end
`

// luaZsetAdd adds an entry to a zset: at its end when its adds continue
// the newest entry (merged into it when the score is the same and the
// zset merges), then trims the oldest entries past MaxEntries.
func luaZsetAdd(w *writer, a *Algorithm, s *Add, d dialect, ind string) {
	st := s.State
	list, key := luaName(st.Name), fmt.Sprintf("KEYS[%d]", stateIndex(a, st)+1)
	x := list + "__x"
	var vals []string
	for i, f := range st.Entry {
		if f != st.Running {
			vals = append(vals, luaName(f.Name)+" = "+d.print(s.Values[i]))
		}
	}
	w.line("%sdo", ind)
	in := ind + "  "
	w.line("%slocal %s = {%s}", in, x, strings.Join(vals, ", "))
	if st.GrowsAtEnd() {
		// As goZsetAdd: at the newest entry's score at least, its running
		// sum continued, merged into it at the same score.
		top, score := list+"__top", luaName(st.Entry[0].Name)
		w.line("%sif %s ~= nil then", in, top)
		w.line("%s  if %s.%s > %s.%s then -- the set grows at its end", in, top, score, x, score)
		w.line("%s    %s.%s = %s.%s", in, x, score, top, score)
		w.line("%s  end", in)
		if st.Running != nil {
			run, of := luaName(st.Running.Name), luaName(st.RunOf.Name)
			w.line("%s  %s.%s = (%s.%s + %s.%s) %% %s", in, x, run, top, run, x, of, runModName)
		}
		if st.Merge != nil {
			m := luaName(st.Merge.Name)
			w.line("%s  if %s.%s == %s.%s then -- merge into it (its member removed after the add)", in, top, score, x, score)
			w.line("%s    %s.replaces__ = %s.member__", in, x, top)
			w.line("%s    %s.%s = %s.%s + %s.%s", in, x, m, x, m, top, m)
			w.line("%s  end", in)
		}
		if st.Running != nil {
			run, of := luaName(st.Running.Name), luaName(st.RunOf.Name)
			w.line("%selse", in)
			w.line("%s  %s.%s = %s.%s %% %s", in, x, run, x, of, runModName)
		}
		w.line("%send", in)
	}
	var formats, fields []string
	for i, f := range st.Entry {
		fields = append(fields, x+"."+luaName(f.Name))
		if i == 1 && st.PadWidth > 0 {
			formats = append(formats, fmt.Sprintf("%%0%dd", st.PadWidth))
		} else {
			formats = append(formats, "%d")
		}
	}
	w.line("%s%s.member__ = string.format(%s, %s)", in, x, luaStr(strings.Join(formats, ":")), strings.Join(fields, ", "))
	w.line("%s%s'ZADD', %s, string.format('%%d', %s.%s), %s.member__)", in, w.call(), key, x, luaName(st.Entry[0].Name), x)
	w.line("%s%s__card = %s__card + 1", in, list, list)
	if st.GrowsAtEnd() && st.Merge != nil {
		// Removed after the add, so that the key never vanishes between two
		// writes of one call (see Drop in luaBlockNamed).
		w.line("%sif %s.replaces__ ~= nil and %s.replaces__ ~= %s.member__ then", in, x, x, x)
		w.line("%s  %s'ZREM', %s, %s.replaces__)", in, w.call(), key, x)
		w.line("%s  %s__card = %s__card - 1", in, list, list)
		w.line("%send", in)
	}
	max := d.print(st.MaxEntries)
	w.line("%sif %s__card > %s then -- keep the newest %s (the count read, which only errs high)", in, list, max, Format(st.MaxEntries))
	w.line("%s  %s'ZREMRANGEBYRANK', %s, 0, string.format('%%d', -(%s) - 1))", in, w.call(), key, max)
	w.line("%s  %s__card = %s", in, list, max)
	w.line("%send", in)
	if st.GrowsAtEnd() {
		w.line("%s%s__top = %s", in, list, x)
	}
	w.line("%send", ind)
}

// luaLocal is a Lua local of the generated code, as an expression.
func luaLocal(name string) Expr { return &VarRef{L: &Let{Name: name}} }
