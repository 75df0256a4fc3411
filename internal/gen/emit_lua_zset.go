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
// number of entries scored below a bound.
func luaZsetRead(w *writer, s *State, key int) {
	w.text(luaZsetReadText, "{list}", luaName(s.Name), "{key}", fmt.Sprintf("KEYS[%d]", key))
	if s.Running != nil {
		luaRunHelpers(w, s)
	}
}

// luaZsetReadText are the helpers of luaZsetRead for the zset {list} at
// {key}.
const luaZsetReadText = `local {list}__card = redis.call('ZCARD', {key})
-- the entry at rank r (0: the oldest), or nil, what is wrong, and the value
local function {list}__at(r)
  local raw = redis.call('ZRANGE', {key}, r, r)
  local got, what, v = {list}__parse(raw)
  if got == nil then
    return nil, what, v
  end
  got[1].member__ = raw[1]
  return got[1]
end
-- the number of entries scored below bound, as ZCOUNT's max takes it
local function {list}__below(bound)
  if {list}__card == 0 then
    return 0
  end
  return redis.call('ZCOUNT', {key}, '-inf', bound)
end
`

// luaZsetTop reads the newest entry of each zset whose adds continue it,
// after the clock rule has had its say (a stale zset reads as empty).
func luaZsetTop(w *writer, a *Algorithm, v *View, used usage) {
	if v != nil {
		return
	}
	for i, s := range a.States {
		if !s.GrowsAtEnd() || !writtenStates(a.Body)[s] {
			continue
		}
		list := luaName(s.Name)
		w.line("-- the newest entry of %s, which an add continues", keyTemplate(s))
		w.line("local %s__top = nil", list)
		w.line("if %s__card > 0 then", list)
		w.line("  local bad__what, bad__v")
		w.line("  %s__top, bad__what, bad__v = %s__at(%s__card - 1)", list, list, list)
		luaCorruptCheck(w, list+"__top", i+1, "  ")
		w.line("end")
	}
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
	if b.min != nil {
		bound := "'(' .. num(" + luaExact.print(b.min) + ")" // those below min
		if b.minOpen {
			bound = "num(" + luaExact.print(b.min) + ")" // those at or below min
		}
		lo = list + "__below(" + bound + ")"
	}
	if b.max != nil {
		bound := "num(" + luaExact.print(b.max) + ")"
		if b.maxOpen {
			bound = "'(' .. num(" + luaExact.print(b.max) + ")"
		}
		hi = list + "__below(" + bound + ")"
	}
	in := ind + "  "
	// call reads into local the result of a helper that fails with nil.
	call := func(local, fn string, args ...string) {
		w.line("%slocal %s, bad__what, bad__v = %s__%s(%s)", in, local, list, fn, strings.Join(args, ", "))
		luaCorruptCheck(w, local, key, in)
	}
	w.line("%sdo -- the entries in range are those at ranks [lo, hi)", ind)
	w.line("%slocal lo__, hi__ = %s, %s", in, lo, hi)
	switch {
	case plan.kind == byCount && ag.Fn == Sum:
		count := "max(0, hi__ - lo__)"
		if plan.k != 1 {
			count += fmt.Sprintf(" * %d", plan.k)
		}
		w.line("%s%s = min(%s, %d)", in, name, count, ag.Cap)
	case plan.kind == byLast:
		w.line("%sif hi__ > lo__ then", in)
		in += "  "
		call(it, "at", "hi__ - 1")
		w.line("%s%s = %s", in, name, luaExact.print(ag.V))
		w.line("%send", ind+"  ")
	case plan.kind == byCount: // reach: the entry at which the count reaches need
		w.line("%slocal r__ = lo__ + max(0, floor((max(0, %s) + %d - 1) / %d) - 1)", in, luaExact.print(ag.N), plan.k, plan.k)
		w.line("%sif r__ < hi__ then", in)
		in += "  "
		call(it, "at", "r__")
		w.line("%s%s = %s", in, name, luaExact.print(ag.R))
		w.line("%send", ind+"  ")
	case ag.Fn == Sum:
		call("sum__", "sum", "lo__", "hi__")
		w.line("%s%s = min(sum__, %d)", in, name, ag.Cap)
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
  if hi <= lo or min(total, cap) < need then
    return false
  end
  if min((first.{run} - base) % {mod}, cap) >= need then
    return first
  end
  -- the entry sought is at a rank in [a, b]; found is the entry at b
  local a, b, found = lo + 1, hi - 1, top
  local function probe(r)
    local x, what, v = {list}__at(r)
    if x == nil then
      return nil, what, v
    end
    if min((x.{run} - base) % {mod}, cap) >= need then
      b, found = r, x
    else
      a = r + 1
    end
    return true
  end
  local step, galloping = 2, true
  while a < b do
    local r = floor((a + b) / 2)
    if galloping then
      r = min(lo + step - 1, b - 1)
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
		w.line("%s  %s.%s = max(%s.%s, %s.%s) -- the set grows at its end", in, x, score, x, score, top, score)
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
	var parts []string
	for i, f := range st.Entry {
		v := x + "." + luaName(f.Name)
		switch {
		case i == 1 && st.PadWidth > 0:
			parts = append(parts, fmt.Sprintf("string.format('%%0%dd', %s)", st.PadWidth, v))
		default:
			parts = append(parts, "num("+v+")")
		}
	}
	w.line("%s%s.member__ = %s", in, x, strings.Join(parts, " .. ':' .. "))
	w.line("%sredis.call('ZADD', %s, num(%s.%s), %s.member__)", in, key, x, luaName(st.Entry[0].Name), x)
	if st.GrowsAtEnd() && st.Merge != nil {
		// Removed after the add, so that the key never vanishes between two
		// writes of one call (see Drop in luaBlockNamed).
		w.line("%sif %s.replaces__ ~= nil and %s.replaces__ ~= %s.member__ then", in, x, x, x)
		w.line("%s  redis.call('ZREM', %s, %s.replaces__)", in, key, x)
		w.line("%send", in)
	}
	w.line("%sredis.call('ZREMRANGEBYRANK', %s, 0, num(-(%s) - 1)) -- keep the newest %s", in, key, d.print(st.MaxEntries), Format(st.MaxEntries))
	if st.GrowsAtEnd() {
		w.line("%s%s__top = %s", in, list, x)
	}
	w.line("%send", ind)
}
