package gen

import (
	"regexp"
	"strings"
)

// A script states only what its code uses, and only where it runs it:
// each helper function is a closure made at every call of the script
// (EVAL runs the script's whole text as one function), so that a helper
// the common path does not call is defined inside the branch that does
// (the exact checks of the arguments, luaExactArgs). The Functions library
// defines every helper and constant once, when it loads.

// luaHelper is a helper function of the scripts: its name and its source.
type luaHelper struct {
	name, src string
}

// luaHelperList are the helpers, each after those it calls.
var luaHelperList = []luaHelper{
	{"int", `-- the integer in s, or nil (at most 17 characters: 16 digits and a sign)
local function int(s)
  if not s or #s > 17 or not string.match(s, '^%-?%d+$') then
    return nil
  end
  return tonumber(s)
end
`},
	{"field", `-- a stored field: dflt when absent, clamped into [lo, hi], nil if not an integer
local function field(v, dflt, lo, hi)
  if not v then
    return dflt
  end
  local n = int(v)
  if n == nil then
    return nil
  end
  if n < lo then
    return lo
  elseif n > hi then
    return hi
  end
  return n
end
`},
	{"clip", `-- s cut to 32 bytes, for an error message
local function clip(s)
  s = tostring(s)
  if #s > 32 then
    return string.sub(s, 1, 32) .. '...'
  end
  return s
end
`},
	{"num", `-- integer to string without exponent notation
local function num(n)
  return string.format('%d', n)
end
`},
	{"split", `-- s split at its first n-1 colons into n parts, or nil
local function split(s, n)
  local parts, from = {}, 1
  for i = 1, n - 1 do
    local at = string.find(s, ':', from, true)
    if not at then
      return nil
    end
    parts[i] = string.sub(s, from, at - 1)
    from = at + 1
  end
  parts[n] = string.sub(s, from)
  return parts
end
`},
	{"write", `-- runs a command that writes now (w true), or keeps it in w for later: a
-- policy's limits write once every limit has admitted
local function write(w, ...)
  if w == true then
    return redis.call(...)
  end
  w[#w + 1] = {...}
end
`},
	{"writes", `-- runs the commands a policy's limit kept (see write)
local function writes(w)
  for i = 1, #w do
    redis.call(unpack(w[i]))
  end
end
`},
	{"ratio_less", `-- whether a / b < c / d, exactly, for a, c >= 0 and b, d >= 1 (Euclid's
-- algorithm on the two fractions: every value stays below the largest)
local function ratio_less(a, b, c, d)
  local qa, qc = math.floor(a / b), math.floor(c / d)
  if qa ~= qc then
    return qa < qc
  end
  local ra, rc = a - qa * b, c - qc * d
  if ra == 0 or rc == 0 then
    return ra == 0 and rc ~= 0
  end
  return ratio_less(d, rc, b, ra) -- ra/b < rc/d when d/rc < b/ra
end
`},
	{"longer", `-- whether the wait a is longer than b, where -1 is never
local function longer(a, b)
  return a ~= b and (a == -1 or (b ~= -1 and a > b))
end
`},
	{"binding", `-- the binding limit of R's n limits (R: a policy's reply, the index then
-- each limit's fields): when every one admits (all), the least remaining
-- relative to its limit; else, of those that deny, the longest wait (-1:
-- never); ties to the first
local function binding(R, n, all)
  local b = 1
  for i = 2, n do
    local o, p = 7 * i - 6, 7 * b - 6
    if all then
      if ratio_less(R[o + 3], R[o + 2], R[p + 3], R[p + 2]) then
        b = i
      end
    elseif R[o + 1] == 0 and (R[p + 1] == 1 or longer(R[o + 4], R[p + 4])) then
      b = i
    end
  end
  return b
end
`},
	{"keep_last", `-- the last n entries of list
local function keep_last(list, n)
  if #list <= n then
    return list
  end
  local out = {}
  for i = #list - n + 1, #list do
    out[#out + 1] = list[i]
  end
  return out
end
`},
}

// luaMathFuncs are math's functions the scripts may read, as locals.
var luaMathFuncs = []string{"max", "min", "floor"}

// luaCalls reports whether code calls name: name( not after a dot or a
// letter, outside string literals and comments.
func luaCalls(code, name string) bool {
	return regexp.MustCompile(`(^|[^.\w])` + name + `\(`).MatchString(luaCodeOnly(code))
}

// luaReads reports whether code reads the name (a constant) as a word,
// outside string literals and comments.
func luaReads(code, name string) bool {
	return regexp.MustCompile(`\b` + name + `\b`).MatchString(luaCodeOnly(code))
}

// luaLiterals matches a string literal in single quotes (the generator
// writes no other) or a comment to the end of its line.
var luaLiterals = regexp.MustCompile(`'(\\.|[^'\\])*'|--[^\n]*`)

// luaCodeOnly is code with its string literals and comments blanked out.
func luaCodeOnly(code string) string { return luaLiterals.ReplaceAllString(code, "''") }

// luaMathLocals declares math's functions code calls as locals ("" if
// none): a function of the library reads them when called, since a
// library may read no global while it loads.
func luaMathLocals(code string) string {
	var names, vals []string
	for _, f := range luaMathFuncs {
		if luaCalls(code, f) {
			names, vals = append(names, f), append(vals, "math."+f)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "local " + strings.Join(names, ", ") + " = " + strings.Join(vals, ", ") + "\n"
}

// luaHelpersFor writes what code needs before it: math's functions it
// calls, the spec's constants it reads, and the helpers it
// calls with those they call in turn. declared are names a scope around
// code declares already.
func luaHelpersFor(w *writer, sp *Spec, code string, declared map[string]bool) {
	uses := code
	var helpers []luaHelper
	for i := len(luaHelperList) - 1; i >= 0; i-- { // callers first: they add their callees' uses
		h := luaHelperList[i]
		if !declared[h.name] && luaCalls(uses, h.name) {
			helpers = append([]luaHelper{h}, helpers...)
			uses += h.src
		}
	}
	if m := luaMathLocals(uses); m != "" {
		w.piece("math", "")
		w.raw(m)
		w.line("")
	}
	if !declared["KEYS"] && (luaReads(code, "KEYS") || luaReads(code, "ARGV")) {
		w.piece("KEYS", "")
		w.line("local KEYS, ARGV = KEYS, ARGV -- globals of the script, read as locals")
		w.line("")
	}
	var consts []*Const
	for _, c := range constants(sp) {
		if !declared[c.Name] && luaReads(uses, c.Name) {
			consts = append(consts, c)
		}
	}
	if len(consts) > 0 {
		luaConstantList(w, consts)
	}
	for i, h := range helpers {
		if i > 0 {
			w.line("")
		}
		w.piece(h.name, strings.TrimSpace(strings.ReplaceAll(" "+luaNeeds(sp, h.src)+" ", " "+h.name+" ", " ")))
		w.raw(h.src)
	}
	if len(helpers) > 0 {
		w.line("")
	}
	w.piece("", "")
}

// luaNeeds names what code needs before it, for a composed script's
// pieces (luaPieceMark): the helpers it calls, the constants it reads,
// math's functions ("math") and KEYS, joined by spaces.
func luaNeeds(sp *Spec, code string) string {
	var out []string
	if luaMathLocals(code) != "" {
		out = append(out, "math")
	}
	if luaReads(code, "KEYS") || luaReads(code, "ARGV") {
		out = append(out, "KEYS")
	}
	for _, c := range constants(sp) {
		if luaReads(code, c.Name) {
			out = append(out, c.Name)
		}
	}
	for _, h := range luaHelperList {
		if luaCalls(code, h.name) {
			out = append(out, h.name)
		}
	}
	return strings.Join(out, " ")
}

// luaPieceMark begins each piece of a policy script that a composed
// script takes (package redislimit's, for a policy it planned): the
// mark, the piece's name and what it needs; a mark with no name ends the
// piece before it. It is a comment: a script runs as if it were not
// there.
const luaPieceMark = "--: "

// piece marks the start of a piece named name that needs needs (see
// luaPieceMark), or with name "" the end of one, when w marks pieces.
func (w *writer) piece(name, needs string) {
	if !w.pieces {
		return
	}
	if name == "" {
		w.line("%s-", luaPieceMark)
		return
	}
	w.line("%s", strings.TrimSpace(luaPieceMark+name+" "+needs))
}

// luaAllHelpers writes every constant and helper: what the Functions
// library states once, for all its functions.
func luaAllHelpers(w *writer, sp *Spec) {
	luaConstantList(w, constants(sp))
	for i, h := range luaHelperList {
		if i > 0 {
			w.line("")
		}
		w.raw(h.src)
	}
}

// luaAssemble is a script: header, then what code needs before it
// (luaHelpersFor; code's inner blocks, which declare their own helpers,
// are not looked at), then code, its own code, which the Functions
// library runs as a function.
func luaAssemble(header *writer, sp *Spec, code *writer) scriptParts {
	uses := code.b.String()
	for _, b := range code.inner {
		uses = strings.Replace(uses, b, "", 1)
	}
	luaHelpersFor(header, sp, uses, nil)
	header.codeAt = header.b.Len()
	header.raw(code.b.String())
	return luaScriptOf(header)
}
