package gen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/limitspec/limitspec/kit"
)

// luaReserved are names a generated local must not take.
var luaReserved = words(`and break do else elseif end false for function if in
	local nil not or repeat return then true until while
	KEYS ARGV redis math string table tostring tonumber type error
	bad corrupt int field num split keep_last unpack ipairs
	out parts name x i _ ALG clip stale min max floor head`)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func luaName(n string) string {
	if luaReserved[n] {
		return n + "_"
	}
	return n
}

// luaFieldVar is the local holding a state field read at the start.
func luaFieldVar(f *Field) string { return f.State.Name + "_" + f.Name }

// luaExact renders decision logic: every value is an exact integer below
// 2^53, so doubles compute it exactly. An operand its rendering reads
// twice is written out twice where it is not a leaf (luaHoisting names it
// instead).
var luaExact = luaDialect(nil)

// luaDialect is luaExact with hoist, which turns an operand that is not a
// leaf into a local computed before the statement (nil: the operand is
// written out twice, parenthesised).
func luaDialect(hoist func(operand string) string) dialect {
	if hoist == nil {
		hoist = func(s string) string { return "(" + s + ")" }
	}
	return dialect{
		leaf: luaLeaf,
		ops:  luaOps,
		call: luaCall(hoist),
		cond: luaCond,
		agg:  formatAgg,
	}
}

// luaLeaf renders literals and references in Lua.
var luaLeaf = leafNames{
	constant: func(name string) string { return name }, // a local of every script that reads it (luaHelpersFor)
	force:    "force",
	param:    func(p *Param) string { return luaName(p.Name) },
	input:    func(in *Input) string { return in.Name },
	field:    luaFieldVar,
	let:      func(l *Let) string { return luaName(l.Name) },
	str:      func(in *StrInput) string { return luaName(in.Name) },
	entry:    func(e *EntryRef) string { return luaName(e.It.Name) + "." + luaName(e.F.Name) },
}.leaf

// luaCall renders the operators written as calls, and floor division,
// inline: a call of math.min or math.floor is a call into C from the
// script, some hundreds of machine instructions, where these are a few
// operations of Lua's VM. Each reads its operands twice, so an operand
// that is not a leaf goes through hoist. For 0 <= a and 1 <= b with
// a + b below 2^53 (the analysis requires it of every division), Lua's
// a % b (a - floor(a / b) * b in doubles) is exact, and so are
// (a - a % b) / b, floor(a / b), and (a + (0 - a) % b) / b, ceil(a / b):
// exact_test.go checks it. min and max pick a unless b is below (above)
// it, as math.min and math.max do.
func luaCall(hoist func(string) string) func(fn string, args []string) string {
	return func(fn string, args []string) string {
		a, b := args[0], args[1]
		if !luaIsLeaf(a) {
			a = hoist(a)
		}
		if !luaIsLeaf(b) {
			b = hoist(b)
		}
		switch fn {
		case "min":
			return "(" + b + " < " + a + " and " + b + " or " + a + ")"
		case "max":
			return "(" + b + " > " + a + " and " + b + " or " + a + ")"
		case "/":
			return "((" + a + " - " + a + " % " + b + ") / " + b + ")"
		case "ceildiv":
			return "((" + a + " + (0 - " + a + ") % " + b + ") / " + b + ")"
		}
		panic("lua call " + fn)
	}
}

// luaIsLeaf reports whether the Lua expression s is a name (a.b included)
// or a literal: read twice, it costs no more than read once.
func luaIsLeaf(s string) bool {
	if s == "" {
		return false
	}
	if s[0] >= '0' && s[0] <= '9' {
		return strings.Trim(s, "0123456789") == ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// luaCond renders if-then-else as and-or.
func luaCond(c, a, b string, t Type) string {
	if t == Bool { // a may be false: and-or would pick b
		return "(" + luaParen(c) + " and " + luaParen(a) + " or not " + luaParen(c) + " and " + luaParen(b) + ")"
	}
	return "(" + luaParen(c) + " and " + luaParen(a) + " or " + luaParen(b) + ")"
}

// luaOps are Lua's operators: && || ! != as and, or, not, ~=, and /
// written as a call (floor division, inline: see luaExact's call).
var luaOps = func() *[numOps]opForm {
	f := opForms()
	f[OpAnd] = opForm{"and", false}
	f[OpOr] = opForm{"or", false}
	f[OpNot] = opForm{"not ", false}
	f[OpNe] = opForm{"~=", false}
	f[OpDiv] = opForm{"/", true}
	return f
}()

// luaParen parenthesises the Lua expression s unless it is one name, one
// number, one call or already parenthesised as a whole.
func luaParen(s string) string {
	if !strings.ContainsAny(s, " ") || wholeParens(s) {
		return s
	}
	if i := strings.IndexByte(s, '('); i > 0 && !strings.ContainsAny(s[:i], " ") && wholeParens(s[i:]) {
		return s // a call: name(...)
	}
	return "(" + s + ")"
}

// wholeParens reports whether s is "(...)" with its first parenthesis
// closed by its last byte.
func wholeParens(s string) bool {
	if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
		return false
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i < len(s)-1 {
				return false
			}
		}
	}
	return true
}

// luaConstantList declares the constants cs.
func luaConstantList(w *writer, cs []*Const) {
	w.line("-- the spec's constants")
	for _, c := range cs {
		w.piece(c.Name, "")
		commentLines(w, "--", c.Comments)
		w.line("local %s = %d", c.Name, c.Value)
	}
	w.line("")
}

// constants are the spec's constants and MAX_SAFE, as the generated code
// names them.
func constants(sp *Spec) []*Const {
	return append(slices.Clone(sp.Consts), &Const{Name: maxSafeName, Value: MaxSafe,
		Comments: []string{"2^53 - 1, the largest integer a double holds exactly: the bound of the exactness checks"}})
}

// commentLines writes each of comments as a line of its own, after
// prefix (the indentation and the comment marker) and a space.
func commentLines(w *writer, prefix string, comments []string) {
	for _, c := range comments {
		w.line("%s", strings.TrimRight(prefix+" "+c, " "))
	}
}

// maxSafeName names 2^53 - 1 (MaxSafe) in the generated code.
const maxSafeName = "MAX_SAFE"

// The constants the generator itself reads (Spec.MaxSkew, Spec.RunMod),
// by which the generated code names them.
const (
	maxSkewName = "MAX_SKEW_MS"
	runModName  = "RUN_MOD"
)

// luaScriptName is the script of an algorithm, or of one of its views.
func luaScriptName(a *Algorithm, v *View) string {
	if v == nil {
		return a.Name
	}
	return a.Name + "_" + v.Name
}

// luaArgs lists the ARGV of a script in order: now_ms and cost, force
// (luaTakesForce), the string inputs, then the parameters; a view takes
// now_ms and the parameters.
func luaArgs(sp *Spec, a *Algorithm, v *View) (ints []*Input, strs []*StrInput, first int) {
	if v != nil {
		return sp.Inputs[:1], nil, 2
	}
	return sp.Inputs, a.Strings, len(sp.Inputs) + 1 + len(a.Strings) + 1
}

// emitLua returns the script of one algorithm (v nil) or of one view.
func emitLua(sp *Spec, a *Algorithm, v *View) scriptParts {
	var w writer
	w.line("-- Code generated by cmd/gen from %s. DO NOT EDIT.", algorithmSource(sp))
	w.line("--")
	luaHeader(&w, sp, a, v)
	w.line("")
	var code writer
	luaScriptCode(&code, sp, a, v, "")
	parts := luaAssemble(&w, sp, &code)
	if v == nil { // the library's function remembers the parameters it found valid
		memo, decl := luaMemo(a)
		var lib writer
		luaScriptCode(&lib, sp, a, nil, memo)
		if a.InFlight() {
			decl = "" // refused at once: nothing to remember
		}
		parts.lib = libFunc{code: strings.Trim(lib.b.String(), "\n"), top: decl}
	}
	return parts
}

// The suffix of the script that goes with a decision, its reset:
// lua/<name><suffix>.lua.
const resetSuffix = "_reset"

// algorithmSource names the file sp's algorithms come from.
func algorithmSource(sp *Spec) string {
	if sp.Library == CatalogueLibrary {
		return "spec/algorithms.yaml"
	}
	return sp.Source
}

// luaScriptCode emits a script's own code, after its header and the
// helpers it uses: the decision of a (v nil) or the view v; with memo,
// the decision of the Functions library's function, which looks its
// parameters up in memo (luaFastArgs).
func luaScriptCode(w *writer, sp *Spec, a *Algorithm, v *View, memo string) {
	ints, strs, firstParam := luaArgs(sp, a, v)
	if v != nil {
		luaErrors(w, a.Name)
		w.line("")
		luaArgCount(w, sp, a, v)
		w.line("")
		luaParams(w, a, firstParam)
		w.line("")
		luaKeys(w, a, "", false)
		w.line("")
		luaInputs(w, ints, strs, false)
		w.line("")
		luaDecision(w, sp, a, v, "")
		return
	}
	w.line("local ALG = %s", luaStr(a.Name+": "))
	w.line("")
	if a.InFlight() {
		// its decision writes nothing: alone, it would admit every request
		w.line("-- an in-flight limit counts only the holds of a holding policy (the holds")
		w.line("-- script's): decided alone it writes nothing, so every call is refused")
		w.line("return redis.error_reply('BADINPUT ' .. ALG .. %s)", luaStr(kit.MsgInFlight))
		return
	}
	luaFastArgs(w, sp, a, memo)
	exact := luaExactArgs(sp, a)
	w.inner = append(w.inner, exact)
	w.raw(exact)
	w.line("")
	luaRequestReadOf(w, a, len(sp.Reply))
	w.line("")
	luaDecision(w, sp, a, nil, "")
}

// luaParams parses and checks the parameters, from ARGV[firstParam] on,
// then their joint bounds and the bound analysis's checks.
func luaParams(w *writer, a *Algorithm, firstParam int) {
	w.line("-- parameters")
	for i, p := range a.Params {
		arg := fmt.Sprintf("ARGV[%d]", i+firstParam)
		n := luaName(p.Name)
		if p.Default != nil {
			w.line("%s%s = %d", w.decl(), n, *p.Default)
			w.line("if %s ~= nil then", arg)
			w.line("  %s = int(%s)", n, arg)
			w.line("end")
		} else {
			w.line("%s%s = int(%s)", w.decl(), n, arg)
		}
		w.line("if %s == nil or %s < %d or %s > %d then", n, n, p.Min, n, p.Max)
		w.line("  return bad(%s .. clip(%s))", luaStr(msgParamPrefix(p)), arg)
		w.line("end")
	}
	for _, r := range a.Requires {
		w.line("if not (%s) then", luaExact.print(r.Cond))
		w.line("  return bad(%s)", luaStr(r.Doc))
		w.line("end")
	}
	if len(a.Checks) > 0 {
		w.line("-- parameters under which a value could pass 2^53-1 (see gen/bounds.go)")
	}
	for _, c := range a.Checks {
		w.line("if not (%s) then", luaExact.print(c.Cond))
		w.line("  return bad(%s)", luaStr(c.Msg))
		w.line("end")
	}
}

// luaKeys checks KEYS: as many as the states (with request, perhaps a
// request key after them: a decision's), all with one hash tag, the
// key, which must not be empty nor begin with '}', each its state's
// suffix with the parameters it names (parsed already), after infix (a
// Lua expression; "" for none).
func luaKeys(w *writer, a *Algorithm, infix string, request bool) {
	w.line("-- keys: all share the hash tag {key}, and name the parameters")
	if request {
		w.line("if #KEYS ~= %d and #KEYS ~= %d then", len(a.States), len(a.States)+1)
		w.line("  return bad(%s)", luaStr(fmt.Sprintf("expected %d keys: %s, then perhaps a request key", len(a.States), keyTemplates(a))))
	} else {
		w.line("if #KEYS ~= %d then", len(a.States))
		w.line("  return bad(%s)", luaStr(fmt.Sprintf("expected %d keys: %s", len(a.States), keyTemplates(a))))
	}
	w.line("end")
	w.line("local tail = %s", luaKeyTail(a.States[0], infix, luaParamNum))
	w.line("if string.byte(KEYS[1], 1) ~= 123 or #KEYS[1] <= #tail or not string.find(KEYS[1], tail, #KEYS[1] - #tail + 1, true) then")
	w.line("  return bad(%s)", luaStr("KEYS[1] must be "+keyTemplate(a.States[0])+" for these parameters"))
	w.line("end")
	w.line("if #KEYS[1] == #tail + 1 then -- {} before the tail")
	w.line("  return bad(%s)", luaStr(msgKeyEmpty))
	w.line("end")
	w.line("if string.byte(KEYS[1], 2) == 125 then -- {}...")
	w.line("  return bad(%s)", luaStr(msgKeyBrace))
	w.line("end")
	if len(a.States) > 1 {
		w.line("local head = string.sub(KEYS[1], 1, -#tail - 1) -- {key}")
	}
	for i, s := range a.States[1:] {
		w.line("if KEYS[%d] ~= head .. %s then", i+2, luaKeyTail(s, infix, luaParamNum))
		w.line("  return bad(%s)", luaStr(fmt.Sprintf("KEYS[%d] must be %s with the key of KEYS[1]", i+2, keyTemplate(s))))
		w.line("end")
	}
}

// luaKeyTail is the Lua expression of what follows a key's hash tag,
// from its closing brace: infix (a Lua expression, "" for none), then the
// suffix, with each parameter it names as param writes it: the value of
// its local, parsed already (luaParamNum), or its argument as the caller
// spelled it (luaKeyArg).
func luaKeyTail(s *State, infix string, param func(*Param) string) string {
	parts := []string{}
	text := "}"
	if infix != "" {
		parts = append(parts, luaStr(text), infix)
		text = ""
	}
	for _, p := range s.KeyParts {
		if p.Param == nil {
			text += p.Text
			continue
		}
		parts = append(parts, luaStr(text), param(p.Param))
		text = ""
	}
	if text != "" {
		parts = append(parts, luaStr(text))
	}
	return strings.Join(parts, " .. ")
}

// luaParamNum writes a parameter as the decimal of its local.
func luaParamNum(p *Param) string { return "num(" + luaName(p.Name) + ")" }

// luaInputs parses and checks the per-call inputs: now_ms (the server's
// TIME when empty), cost, force (when the script takes it) and the string
// inputs.
func luaInputs(w *writer, ints []*Input, strs []*StrInput, force bool) {
	w.line("-- per-call inputs")
	for i, in := range ints {
		arg := fmt.Sprintf("ARGV[%d]", i+1)
		if in.Name == "now" {
			if w.decl() != "" {
				w.line("local now")
			}
			w.line("if %s == '' then -- the Redis server's clock", arg)
			luaServerClock(w, "  ")
			w.line("else")
			w.line("  now = int(%s)", arg)
			w.line("end")
		} else {
			w.line("%s%s = int(%s)", w.decl(), in.Name, arg)
		}
		w.line("if %s == nil or %s < %d or %s > %s then", in.Name, in.Name, in.Min, in.Name, luaExact.print(&Lit{V: in.Max, Name: in.MaxName}))
		w.line("  return bad(%s .. clip(%s))", luaStr(msgInputPrefix(in)), arg)
		w.line("end")
	}
	first := len(ints) + 1
	if force {
		luaForceArg(w, first)
		first++
	}
	for i, in := range strs {
		arg := fmt.Sprintf("ARGV[%d]", first+i)
		n := luaName(in.Name)
		w.line("%s%s = %s or ''", w.decl(), n, arg)
		w.line("if #%s > %d then", n, in.MaxLen)
		w.line("  return bad(%s .. #%s)", luaStr(msgStrPrefix(in)), n)
		w.line("end")
	}
}

// luaDecision reads the state and emits the decision (or the view v),
// indented by ind.
func luaDecision(w *writer, sp *Spec, a *Algorithm, v *View, ind string) {
	body := a.Body
	if v != nil {
		body = v.Body
	}
	used := usedNames(body)
	w.line("-- state")
	for i, s := range a.States {
		luaRead(w, sp, s, i+1, v, readsFields(a, v, used, s), readsEntries(a, v, used, s))
	}
	luaStale(w, sp, a, v, used)
	luaZsetTop(w, a, v, used)
	if v == nil {
		luaTypeChecks(w, a, used)
	}
	w.line("")
	if v == nil {
		w.line("-- decision")
	} else {
		w.line("-- view")
	}
	luaBlock(w, sp, a, body, ind)
}

// luaArgCount refuses a call with too few or too many arguments, naming
// them all: a string input or parameter left out would otherwise shift
// every argument after it.
func luaArgCount(w *writer, sp *Spec, a *Algorithm, v *View) {
	ints, strs, _ := luaArgs(sp, a, v)
	var names []string
	for _, in := range ints {
		names = append(names, in.Arg)
	}
	if luaTakesForce(v) {
		names = append(names, "force")
	}
	for _, in := range strs {
		names = append(names, in.Name)
	}
	luaCountCheck(w, names, a)
}

// luaCountCheck refuses ARGV unless it holds the arguments named first,
// then a's parameters up to its last required one, or more of them.
func luaCountCheck(w *writer, first []string, a *Algorithm) {
	names := slices.Clone(first)
	required := len(names) + a.RequiredParams()
	for _, p := range a.Params {
		names = append(names, p.Name)
	}
	w.line("-- arguments")
	w.line("if #ARGV < %d or #ARGV > %d then", required, len(names))
	w.line("  return bad(%s .. #ARGV)", luaStr(msgArgCount(names, required)))
	w.line("end")
}

// readsFields reports whether the script reads the fixed fields of s: a
// decision reads every state's, a view those it uses and the clock's.
func readsFields(a *Algorithm, v *View, used usage, s *State) bool {
	return v == nil || used.states[s] || (a.Clock != nil && a.Clock.State == s)
}

// readsEntries reports whether the script reads the entries of s: those
// its logic uses, a zset it writes, or the collection holding the clock.
func readsEntries(a *Algorithm, v *View, used usage, s *State) bool {
	return used.entries[s] || luaZsetUsed(a, v, used, s) || a.Clock != nil && a.Clock.State == s
}

// luaStale applies the clock rule (Algorithm.Clock): a state whose clock
// is more than MAX_SKEW_MS ahead of now reads as absent, every field its
// default and every collection empty; a decision that writes deletes the
// stale keys first (wipe, called before each write).
func luaStale(w *writer, sp *Spec, a *Algorithm, v *View, used usage) {
	if a.Clock == nil {
		return
	}
	w.line("")
	w.line("-- a state whose clock is more than MAX_SKEW_MS ahead of now_ms was written")
	w.line("-- by a clock that is wrong: it is not trusted, and reads as absent")
	w.line("local stale = %s > now + MAX_SKEW_MS", luaClock(w, a))
	w.line("if stale then")
	for _, s := range a.States {
		if readsFields(a, v, used, s) || used.entries[s] {
			for _, f := range s.Fields {
				w.line("  %s = %s", luaFieldVar(f), luaExact.print(f.Default))
			}
		}
		switch {
		case !readsEntries(a, v, used, s):
		case s.Kind == ZSet:
			w.line("  %s__card = 0", luaName(s.Name))
			if a.Clock.State == s { // its newest entry, read for the clock
				w.line("  %s__top = nil", luaName(s.Name))
			}
		case s.Kind == List:
			w.line("  %s = {}", luaName(s.Name))
		}
	}
	w.line("end")
}

// luaClock is the Lua expression of the algorithm's clock: a string's
// field, or the field of a collection's newest entry (0 when it has
// none), a zset's read here (luaZsetTop reads it for no other zset).
func luaClock(w *writer, a *Algorithm) string {
	c := a.Clock
	if !c.Entry {
		return luaFieldVar(c)
	}
	list, f := luaName(c.State.Name), luaName(c.Name)
	if c.State.Kind == List {
		return fmt.Sprintf("(#%s > 0 and %s[#%s].%s or 0)", list, list, list, f)
	}
	luaReadTop(w, c.State, stateIndex(a, c.State)+1)
	return fmt.Sprintf("(%s__top ~= nil and %s__top.%s or 0)", list, list, f)
}

// luaTypeChecks checks, before any write, the type of every key the
// decision may write but has not read: a key read at the start was
// checked by its read (Redis refuses GET, ZCARD or LRANGE on a
// key of another type), so that a refused call writes nothing whichever
// key is at fault.
func luaTypeChecks(w *writer, a *Algorithm, used usage) {
	written := writtenStates(a.Body)
	for i, s := range a.States {
		readAtStart := s.Kind == Packed || used.entries[s] || s.Kind == ZSet
		if !written[s] || readAtStart {
			continue
		}
		w.line("")
		w.line("-- %s is written but not read: its type, before any write", keyTemplate(s))
		w.line("local %s__type = redis.call('TYPE', KEYS[%d]).ok", luaName(s.Name), i+1)
		w.line("if %s__type ~= 'none' and %s__type ~= %s then", luaName(s.Name), luaName(s.Name), luaStr(s.Kind.String()))
		w.line("  return redis.error_reply('WRONGTYPE ' .. ALG .. %s .. ' holds a ' .. %s__type .. ', not a ' .. %s)", luaClip(fmt.Sprintf("KEYS[%d]", i+1)), luaName(s.Name), luaStr(s.Kind.String()))
		w.line("end")
	}
}

// luaRead reads one state key into locals: the fixed fields of a string
// (state_field: luaReadPacked); when entries is set, the entries of a
// list (a list of tables named after the state, in order, the last
// MaxEntries of them), or the helpers that read a zset by index
// (luaZsetRead).
func luaRead(w *writer, sp *Spec, s *State, key int, v *View, fields, entries bool) {
	k := fmt.Sprintf("KEYS[%d]", key)
	list := luaName(s.Name)
	switch {
	case s.Kind == Packed:
		if fields {
			luaReadPacked(w, s, k)
		}
	default:
		if !entries {
			return
		}
		luaEntryParser(w, sp, s)
		if s.Kind == ZSet {
			luaZsetRead(w, s, key)
			return
		}
		luaEntriesParser(w, s)
		if v == nil { // a decision reads the newest entry alone
			w.line("local %s = {}", list)
			w.line("local %s__newest = redis.call('LINDEX', %s, -1)", list, k)
			w.line("if %s__newest then", list)
			w.line("  local bad__what, bad__v")
			w.line("  %s, bad__what, bad__v = %s__parse({%s__newest})", list, list, list)
			luaCorruptCheck(w, list, key, "  ")
			w.line("end")
			return
		}
		w.line("local %s, bad__what, bad__v = %s__parse(redis.call('LRANGE', %s, 0, -1))", list, list, k)
		luaCorruptCheck(w, list, key, "")
		w.line("%s = keep_last(%s, %s)", list, list, luaExact.print(s.MaxEntries))
	}
}

// luaEntryParser emits {list}__entry(m), the entry a member of the
// collection s (or an item of the list) holds, as a table of its fields:
// one pattern match and Lua's conversion of each integer, clamped into
// its domain. An entry the match refuses is read again as the scripts
// always have (split at its colons, each field an integer of at most 17
// characters), in a block that declares its own helpers: the function
// then returns nil, what is wrong, and the value.
func luaEntryParser(w *writer, sp *Spec, s *State) {
	list := luaName(s.Name)
	var caps, vars, ok, vals []string
	for _, f := range s.Entry {
		v := "e_" + f.Name
		vars = append(vars, v)
		if f.Type == Str {
			caps, vals = append(caps, "(.*)"), append(vals, luaName(f.Name)+" = "+v)
			continue
		}
		caps, ok = append(caps, "(%-?%d+)"), append(ok, "#"+v+" <= 17")
		vals = append(vals, luaName(f.Name)+" = "+v)
	}
	w.line("-- the entry m holds, or nil, what is wrong, and the value")
	w.line("local function %s__entry(m)", list)
	w.line("  local %s = string.match(m, %s)", strings.Join(vars, ", "), luaStr("^"+strings.Join(caps, ":")+"$"))
	w.line("  if %s ~= nil and %s then", vars[0], strings.Join(ok, " and "))
	for _, f := range s.Entry {
		if f.Type == Str {
			continue
		}
		v, lo, hi := "e_"+f.Name, luaExact.print(f.Min), luaExact.print(f.Max)
		w.line("    %s = %s + 0", v, v)
		w.line("    if %s < %s then %s = %s elseif %s > %s then %s = %s end", v, lo, v, lo, v, hi, v, hi)
	}
	w.line("    return {%s}", strings.Join(vals, ", "))
	w.line("  end")
	slow := luaEntrySlow(sp, s)
	w.inner = append(w.inner, slow)
	w.raw(slow)
	w.line("end")
}

// luaEntrySlow is the block of {list}__entry that reads an entry the
// pattern refused, field by field, for the error it gives.
func luaEntrySlow(sp *Spec, s *State) string {
	var body writer
	body.line("local parts = split(m, %d)", len(s.Entry))
	body.line("if parts == nil then")
	body.line("  return nil, %s, m", luaStr(fmt.Sprintf("an entry is not %d fields joined by ':'", len(s.Entry))))
	body.line("end")
	var vals []string
	for j, f := range s.Entry {
		p := fmt.Sprintf("parts[%d]", j+1)
		if f.Type == Str {
			vals = append(vals, luaName(f.Name)+" = "+p)
			continue
		}
		n := "x_" + f.Name
		body.line("local %s = field(%s, nil, %s, %s)", n, p, luaExact.print(f.Min), luaExact.print(f.Max))
		body.line("if %s == nil then", n)
		body.line("  return nil, %s, %s", luaStr("entry field "+f.Name+" is not an integer"), p)
		body.line("end")
		vals = append(vals, luaName(f.Name)+" = "+n)
	}
	body.line("return {%s}", strings.Join(vals, ", "))
	var block writer
	luaHelpersFor(&block, sp, body.b.String(), map[string]bool{"KEYS": true})
	block.raw(body.b.String())
	return luaIndentText(block.b.String(), "  ")
}

// luaEntriesParser emits {list}__parse(raw), the entries of the members
// or items raw, in order, or nil, what is wrong, and the value.
func luaEntriesParser(w *writer, s *State) {
	w.text(`local function {list}__parse(raw)
  local out = {}
  for i = 1, #raw do
    local e, what, v = {list}__entry(raw[i])
    if e == nil then
      return nil, what, v
    end
    out[i] = e
  end
  return out
end
`, "{list}", luaName(s.Name))
}

// luaIndentText indents every line of text but the empty ones by ind.
func luaIndentText(text, ind string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if l != "" {
			b.WriteString(ind)
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// luaReadPacked reads the fixed fields of the string at k (a Lua
// expression) into their locals: each its default when the key is
// absent, else the integers the string packs, joined by ":", each clamped
// into its domain. A string that does not hold them, or one of more than
// 17 characters, is BADSTATE. One pattern match reads every field, and
// Lua's conversion of a string in arithmetic turns each into a number
// (the pattern has checked it is one).
func luaReadPacked(w *writer, s *State, k string) {
	raw := luaName(s.Name) + "__raw"
	var vars, defaults, caps, names, parts, long, nums []string
	for _, f := range s.Fields {
		p := raw + "__" + f.Name
		vars = append(vars, luaFieldVar(f))
		defaults = append(defaults, luaExact.print(f.Default))
		caps = append(caps, "(%-?%d+)")
		names = append(names, f.Name)
		parts = append(parts, p)
		long = append(long, "#"+p+" > 17")
		nums = append(nums, p+" + 0")
	}
	w.line("local %s = %s", strings.Join(vars, ", "), strings.Join(defaults, ", "))
	if w.commitOnly { // a policy's limit reads its state once per call
		cache := w.caches[s]
		w.line("local %s = %s", raw, cache)
		w.line("if %s == nil then", raw)
		w.line("  %s = redis.call('GET', %s) or false", raw, k)
		w.line("  %s = %s", cache, raw)
		w.line("end")
	} else {
		w.line("local %s = redis.call('GET', %s)", raw, k)
	}
	w.line("if %s then", raw)
	w.line("  local %s = string.match(%s, %s)", strings.Join(parts, ", "), raw, luaStr("^"+strings.Join(caps, ":")+"$"))
	w.line("  if %s == nil or %s then", parts[0], strings.Join(long, " or "))
	w.line("    return %s", luaCorrupt(k, luaStr("want the integers "+strings.Join(names, ":")), raw))
	w.line("  end")
	w.line("  %s = %s", strings.Join(vars, ", "), strings.Join(nums, ", "))
	for i, f := range s.Fields {
		v, lo, hi := vars[i], luaExact.print(f.Min), luaExact.print(f.Max)
		w.line("  if %s < %s then %s = %s elseif %s > %s then %s = %s end", v, lo, v, lo, v, hi, v, hi)
	}
	w.line("end")
}

// luaCorrupt is the Lua expression of the BADSTATE error of the key k
// holding v, for the reason what (Lua expressions, all three).
func luaCorrupt(k, what, v string) string {
	return "redis.error_reply('BADSTATE ' .. ALG .. " + luaClip(k) + " .. ': ' .. " + what + " .. ', got ' .. " + luaClip(v) + ")"
}

// luaClip is the Lua expression of the string s (a leaf) cut to 32
// bytes, for an error message, as the helper clip cuts it: written out,
// so that a script makes no helper for its errors.
func luaClip(s string) string {
	return "(#" + s + " > 32 and string.sub(" + s + ", 1, 32) .. '...' or " + s + ")"
}

// luaAggregates computes the aggregates of one statement into locals
// before it, as lowerAggregates plans them.
func luaAggregates(w *writer, a *Algorithm, s Stmt, ind string, names map[*Agg]string) {
	named := naming(luaExact, names)
	for _, st := range lowerAggregates(s, names, luaName) {
		if st.Init == nil {
			w.line("%slocal %s = 0", ind, st.Name)
		} else {
			w.line("%slocal %s = %s", ind, st.Name, luaExact.print(st.Init))
		}
		in := ind
		if len(st.Guard) > 0 {
			w.line("%sif %s then -- else the value is not used", ind, st.guardText(named, "and"))
			in += "  "
		}
		if st.Agg.It.State.Kind == ZSet {
			luaZsetAgg(w, a, st, in)
		} else {
			luaListAgg(w, st.Agg, st.Name, in)
		}
		if len(st.Guard) > 0 {
			w.line("%send", ind)
		}
	}
}

// luaListAgg computes an aggregate over a list: in a view by a loop over
// its entries, in a decision from its newest entry alone (luaRead).
func luaListAgg(w *writer, ag *Agg, name, ind string) {
	list, it := luaName(ag.It.State.Name), luaName(ag.It.Name)
	if ag.Fn == Last && ag.Where == nil { // the newest entry alone
		w.line("%sif #%s > 0 then", ind, list)
		w.line("%s  local %s = %s[#%s]", ind, it, list, list)
		w.line("%s  %s = %s", ind, name, luaExact.print(ag.V))
		w.line("%send", ind)
		return
	}
	body := ind + "  "
	if ag.Fn == Reach {
		w.line("%slocal %s__need, %s__run = %s, 0", ind, name, name, luaExact.print(ag.N))
	}
	w.line("%sfor _, %s in ipairs(%s) do", ind, it, list)
	if ag.Where != nil {
		w.line("%s  if %s then", ind, luaExact.print(ag.Where))
		body += "  "
	}
	switch ag.Fn {
	case Sum:
		w.line("%s%s = %s + %s", body, name, name, luaExact.print(ag.V))
	case Last:
		w.line("%s%s = %s", body, name, luaExact.print(ag.V))
	case Reach:
		w.line("%s%s__run = %s__run + %s", body, name, name, luaExact.print(ag.V))
		w.line("%sif %s__run >= %s__need then", body, name, name)
		w.line("%s  %s = %s", body, name, luaExact.print(ag.R))
		w.line("%s  break", body)
		w.line("%send", body)
	}
	if ag.Where != nil {
		w.line("%s  end", ind)
	}
	w.line("%send", ind)
}

// addsLater reports whether drop is followed, in body, by an add of its
// state: an entry whose score is above the drop's bound (the new entry of
// a log or of a window's bucket), which the drop would not remove.
func addsLater(body []Stmt, drop *Drop) bool {
	for i, s := range body {
		if s == Stmt(drop) {
			for _, next := range body[i+1:] {
				if add, ok := next.(*Add); ok && add.State == drop.State {
					return true
				}
			}
		}
	}
	return false
}

func luaBlock(w *writer, sp *Spec, a *Algorithm, body []Stmt, ind string) {
	e := &luaEmitter{w: w, sp: sp, a: a, names: map[*Agg]string{}}
	e.d = naming(luaDialect(e.hoist), e.names)
	e.d.condExpr = e.condExpr
	e.block(body, ind, a.Clock == nil)
}

// luaEmitter emits the statements of one decision or view.
type luaEmitter struct {
	w     *writer
	sp    *Spec
	a     *Algorithm
	names map[*Agg]string // the locals of the aggregates computed so far
	d     dialect         // luaExact, naming them and hoisting operands
	// hoisted are the locals the expressions of the statement being
	// written need before it (see hoist); temps counts them all.
	hoisted []string
	temps   int
}

// hoist makes the operand s a local computed before the statement being
// written, and returns its name.
func (e *luaEmitter) hoist(s string) string {
	name := e.temp()
	e.hoisted = append(e.hoisted, "local "+name+" = "+s)
	return name
}

// condExpr renders if-then-else as and-or, unless a branch hoists an
// operand: it would be computed whichever branch is taken, so the value
// is then a local set by an if statement (condInto), each branch's
// hoisted locals inside it.
func (e *luaEmitter) condExpr(c *Cond) string {
	if e.branchesHoist(c) {
		name := e.temp()
		e.hoisted = append(e.hoisted, "local "+name)
		e.hoisted = append(e.hoisted, e.condInto(name, c)...)
		return name
	}
	cond, hc := e.hoisting(c.C)
	e.hoisted = append(e.hoisted, hc...)
	return luaCond(cond, e.d.print(c.A), e.d.print(c.B), c.Type())
}

// branchesHoist reports whether printing a branch of c hoists a local.
func (e *luaEmitter) branchesHoist(c *Cond) bool {
	temps := e.temps
	defer func() { e.temps = temps }() // a trial: its locals are not written
	_, ha := e.hoisting(c.A)
	_, hb := e.hoisting(c.B)
	return len(ha) > 0 || len(hb) > 0
}

// condInto is the if statement that sets target to the value of c, each
// branch computing the locals it hoists (an else-if chain for a nested
// if-then-else in the else branch): lines to write before the statement
// that reads target.
func (e *luaEmitter) condInto(target string, c *Cond) []string {
	cond, hc := e.hoisting(c.C)
	out := append(hc, "if "+cond+" then")
	out = append(out, luaIndent(e.assign(target, c.A))...)
	if b, ok := c.B.(*Cond); ok {
		rest := e.condInto(target, b)
		if strings.HasPrefix(rest[0], "if ") { // nothing hoisted before it
			return append(append(out, "else"+rest[0]), rest[1:]...)
		}
		return append(append(append(out, "else"), luaIndent(rest)...), "end")
	}
	return append(append(append(out, "else"), luaIndent(e.assign(target, c.B))...), "end")
}

// assign is target = x, after the locals x hoists.
func (e *luaEmitter) assign(target string, x Expr) []string {
	v, h := e.hoisting(x)
	return append(h, target+" = "+v)
}

// hoisting prints x, and returns it and the locals it hoisted (which
// are not added to the statement's).
func (e *luaEmitter) hoisting(x Expr) (string, []string) {
	saved := e.hoisted
	e.hoisted = nil
	s := e.d.print(x)
	h := e.hoisted
	e.hoisted = saved
	return s, h
}

// temp names a new local.
func (e *luaEmitter) temp() string {
	e.temps++
	return fmt.Sprintf("t__%d", e.temps)
}

// luaIndent indents lines by two spaces.
func luaIndent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "  " + l
	}
	return out
}

// dup is the emitter's dialect without hoisting: for code written by
// helpers that write their own lines, where an operand that is not a leaf
// is written out twice.
func (e *luaEmitter) dup() dialect { return naming(luaExact, e.names) }

// line writes the locals hoisted so far, then the line format makes, at
// the indentation ind.
func (e *luaEmitter) line(ind, format string, args ...any) {
	text := fmt.Sprintf(format, args...) // prints the expressions: hoists
	for _, h := range e.hoisted {
		e.w.line("%s%s", ind, h)
	}
	e.hoisted = e.hoisted[:0]
	e.w.line("%s%s", ind, text)
}

// luaBlockState is what a block's statements tell the ones after them.
type luaBlockState struct {
	body []Stmt
	ind  string
	// wiped says whether every path to here has already called wipe (or
	// there is no clock).
	wiped bool
	// ttls holds, per key, the TTL this block has already set, so that an
	// add after a write of the same key with the same TTL runs no second
	// PEXPIRE (ZADD and RPUSH keep a key's TTL).
	ttls map[*State]string
	// dropped are the drops written after the block's next add (see Drop).
	dropped map[*State]*Drop
	// ttlUses counts the writes of the block by TTL (as the spec writes
	// it), and ttlText holds the local of each TTL written as text once
	// for several (see ttlArg).
	ttlUses map[string]int
	ttlText map[string]string
}

// block emits body, indented by ind. wiped says whether every path to it
// has already called wipe (or there is no clock); it returns the same for
// the end of body.
func (e *luaEmitter) block(body []Stmt, ind string, wiped bool) bool {
	b := &luaBlockState{body: body, ind: ind, wiped: wiped, ttls: map[*State]string{}, dropped: map[*State]*Drop{},
		ttlUses: map[string]int{}, ttlText: map[string]string{}}
	for _, s := range body {
		switch s := s.(type) {
		case *Store:
			b.ttlUses[Format(s.TTL)]++
		case *Add:
			b.ttlUses[Format(s.TTL)]++
		}
	}
	guarded := false // inside "if commit then", around a run of writes
	for _, s := range body {
		if guard := e.w.commitOnly && isWrite(s); guard != guarded {
			e.guard(b, guard)
			guarded = guard
		}
		commentLines(e.w, b.ind+"--", s.commented().Comments)
		luaAggregates(e.w, e.a, s, b.ind, e.names)
		e.stmt(b, s)
	}
	if guarded {
		e.guard(b, false)
	}
	return b.wiped
}

// guard opens (on) or closes the "if commit then" around a run of writes
// of a policy's limit, which writes only when the policy admits. A TTL's
// local made inside it is not seen after it.
func (e *luaEmitter) guard(b *luaBlockState, on bool) {
	if on {
		e.w.line("%sif commit then", b.ind)
		b.ind += "  "
		return
	}
	b.ind = b.ind[:len(b.ind)-2]
	e.w.line("%send", b.ind)
	b.ttlText = map[string]string{}
}

// stmt emits one statement of the block b.
func (e *luaEmitter) stmt(b *luaBlockState, s Stmt) {
	w, d, ind := e.w, e.d, b.ind
	switch s := s.(type) {
	case *Let:
		switch c, ok := s.X.(*Cond); {
		case computedInPlace(s, e.names, luaName):
		case ok && e.branchesHoist(c):
			e.line(ind, "local %s", luaName(s.Name))
			for _, l := range e.condInto(luaName(s.Name), c) {
				w.line("%s%s", ind, l)
			}
		default:
			e.line(ind, "local %s = %s", luaName(s.Name), d.print(s.X))
		}
	case *If:
		e.line(ind, "if %s then", d.print(s.Cond))
		thenWiped, elseWiped := e.block(s.Then, ind+"  ", b.wiped), b.wiped
		if len(s.Else) > 0 {
			w.line("%selse", ind)
			elseWiped = e.block(s.Else, ind+"  ", b.wiped)
		}
		w.line("%send", ind)
		b.wiped = thenWiped && elseWiped
		b.ttls = map[*State]string{} // the branch may have changed any key
	case *Store:
		b.wiped = luaWipe(w, e.a, ind, b.wiped, nil)
		var vals, formats []string
		for i := range s.State.Fields {
			vals, formats = append(vals, d.print(s.Values[i])), append(formats, "%d")
		}
		ttl := e.ttlArg(b, s.TTL)
		value := fmt.Sprintf("string.format(%s, %s)", luaStr(strings.Join(formats, ":")), strings.Join(vals, ", "))
		if w.commitOnly { // the state a later decision of this call reads, once written
			cache := w.caches[s.State]
			e.line(ind, "local %s__new = %s", luaName(s.State.Name), value)
			value = luaName(s.State.Name) + "__new"
			defer e.line(ind, "%s = commit == true and %s or %s", cache, value, cache)
		}
		e.line(ind, "%s'PSETEX', %s, %s, %s)", w.call(), e.key(s.State), ttl, value)
		b.ttls[s.State] = e.dup().print(s.TTL)
	case *Add:
		e.add(b, s)
	case *Drop:
		e.drop(b, s)
	case *Clear:
		b.wiped = luaWipe(w, e.a, ind, b.wiped, s.State)
		delete(b.ttls, s.State)
		w.line("%s%s'DEL', %s)", ind, w.call(), e.key(s.State))
		if s.State.GrowsAtEnd() {
			w.line("%s%s__top = nil", ind, luaName(s.State.Name))
		}
	case *Show:
		e.show(s, ind)
	case *Reply:
		e.reply(s, ind)
	}
}

// key is the KEYS entry of the state s.
func (e *luaEmitter) key(s *State) string { return fmt.Sprintf("KEYS[%d]", stateIndex(e.a, s)+1) }

// add emits an add, its PEXPIRE unless the block has set that TTL, and a
// drop of the same collection deferred to after it.
func (e *luaEmitter) add(b *luaBlockState, s *Add) {
	w, ind := e.w, b.ind
	b.wiped = luaWipe(w, e.a, ind, b.wiped, nil)
	if s.State.Kind == ZSet {
		luaZsetAdd(w, e.a, s, e.dup(), ind)
	} else {
		luaListAdd(w, e.a, s, e.dup(), ind)
	}
	if ttl := e.dup().print(s.TTL); b.ttls[s.State] != ttl {
		b.ttls[s.State] = ttl
		e.line(ind, "%s'PEXPIRE', %s, %s)", w.call(), e.key(s.State), e.ttlArg(b, s.TTL))
	}
	if drop := b.dropped[s.State]; drop != nil {
		delete(b.dropped, s.State)
		w.line("%s-- after the add (see Drop)", ind)
		e.dropNow(ind, drop)
	}
}

// ttlArg is the TTL ttl as a command's argument, decimal text: written
// out where the block writes with it once, else made once into a local
// that its writes share.
func (e *luaEmitter) ttlArg(b *luaBlockState, ttl Expr) string {
	key := Format(ttl)
	if name, ok := b.ttlText[key]; ok {
		return name
	}
	text := "string.format('%d', " + e.d.print(ttl) + ")"
	if b.ttlUses[key] < 2 {
		return text
	}
	name := e.temp()
	e.line(b.ind, "local %s = %s -- the TTL of the writes below", name, text)
	b.ttlText[key] = name
	return name
}

// dropNow removes the entries of a drop's zset scored at most its bound,
// unless this call has counted none there: the decision read the set
// before any write, and an add puts its entry above every bound a drop
// deferred after it removes (see Drop).
func (e *luaEmitter) dropNow(ind string, s *Drop) {
	list, upto := luaName(s.State.Name), e.d.print(s.Upto)
	if !luaIsLeaf(upto) {
		upto = e.hoist(upto)
	}
	e.line(ind, "if %s__card > 0 and %s__le[%s] ~= 0 then", list, list, upto)
	e.line(ind+"  ", "%s'ZREMRANGEBYSCORE', %s, '-inf', string.format('%%d', %s))", e.w.call(), e.key(s.State), upto)
	e.w.line("%send", ind)
}

// drop emits a drop, or defers it to after the add that follows.
func (e *luaEmitter) drop(b *luaBlockState, s *Drop) {
	w, d, ind := e.w, e.d, b.ind
	b.wiped = luaWipe(w, e.a, ind, b.wiped, nil)
	if addsLater(b.body, s) {
		// Written after the add that follows, so that the key
		// never vanishes between two writes of one call: a
		// Cluster refuses a script's access to a key it does not
		// hold while the key's slot migrates ("non local key"),
		// after the writes before it were made.
		b.dropped[s.State] = s
	} else {
		delete(b.ttls, s.State) // a drop may empty, and so delete, the key
		e.dropNow(ind, s)
	}
	if s.State.GrowsAtEnd() {
		top := luaName(s.State.Name) + "__top"
		e.line(ind, "if %s ~= nil and %s.%s <= %s then", top, top, luaName(s.State.Entry[0].Name), d.print(s.Upto))
		w.line("%s  %s = nil -- every entry is gone: the next add starts afresh", ind, top)
		w.line("%send", ind)
	}
}

// show ends a view: the entries of its collection, if its condition holds.
func (e *luaEmitter) show(s *Show, ind string) {
	w, list, key := e.w, luaName(s.State.Name), stateIndex(e.a, s.State)+1
	if s.State.Kind == ZSet { // a set is read here, whole: its entries parsed as a list's are
		luaEntriesParser(w, s.State)
		w.line("%slocal %s, bad__what, bad__v = %s__parse(redis.call('ZRANGE', KEYS[%d], 0, -1))", ind, list, list, key)
		luaCorruptCheck(w, list, key, ind)
	}
	e.line(ind, "if not (%s) then", e.d.print(s.Cond))
	w.line("%s  return {}", ind)
	w.line("%send", ind)
	w.line("%slocal out = {}", ind)
	w.line("%sfor _, x in ipairs(%s) do", ind, list)
	var vals []string
	for _, f := range s.Fields {
		vals = append(vals, "x."+luaName(f.Name))
	}
	w.line("%s  out[#out + 1] = {%s}", ind, strings.Join(vals, ", "))
	w.line("%send", ind)
	w.line("%sreturn out", ind)
}

// reply ends a decision: the reply's fields, bools as 1 or 0, and in a
// policy's function the deferred writes.
func (e *luaEmitter) reply(s *Reply, ind string) {
	var vals []string
	for i, v := range s.Values {
		if e.sp.Reply[i].Type == Bool {
			vals = append(vals, "("+luaParen(e.d.print(v))+" and 1 or 0)")
		} else {
			vals = append(vals, e.d.print(v))
		}
	}
	if e.w.commitOnly { // a policy's limit: the fields, not a table
		e.line(ind, "return %s", strings.Join(vals, ", "))
	} else {
		for _, l := range luaReplyRemembered(vals) {
			e.line(ind, "%s", l)
		}
	}
}

// isWrite reports whether s writes to Redis.
func isWrite(s Stmt) bool {
	switch s.(type) {
	case *Store, *Add, *Drop, *Clear:
		return true
	}
	return false
}

// luaListAdd appends an entry to a list.
func luaListAdd(w *writer, a *Algorithm, s *Add, d dialect, ind string) {
	var formats, vals []string
	for i, f := range s.State.Entry {
		vals = append(vals, d.print(s.Values[i]))
		if f.Type == Str {
			formats = append(formats, "%s")
		} else {
			formats = append(formats, "%d")
		}
	}
	w.line("%s%s'RPUSH', KEYS[%d], string.format(%s, %s))", ind, w.call(), stateIndex(a, s.State)+1,
		luaStr(strings.Join(formats, ":")), strings.Join(vals, ", "))
}

// luaWipe deletes a stale state, once, before the first write of a path
// (see luaStale), but for the key of deleted, whose write (a clear) is
// that key's DEL; it returns true, the path's new wiped.
func luaWipe(w *writer, a *Algorithm, ind string, wiped bool, deleted *State) bool {
	if wiped {
		return true
	}
	var keys []string
	for i, s := range a.States {
		if s != deleted {
			keys = append(keys, fmt.Sprintf("KEYS[%d]", i+1))
		}
	}
	if len(keys) == 0 {
		w.line("%sstale = false -- the write below deletes every key", ind)
		return true
	}
	w.line("%sif stale then -- every key, before this call's first write", ind)
	w.line("%s  stale = false", ind)
	w.line("%s  %s'DEL', %s)", ind, w.call(), strings.Join(keys, ", "))
	if w.commitOnly { // once written
		for _, s := range a.States {
			if s.Kind == Packed && s != deleted {
				w.line("%s  %s = commit ~= true and %s", ind, w.caches[s], w.caches[s])
			}
		}
	}
	w.line("%send", ind)
	return true
}

func stateIndex(a *Algorithm, s *State) int {
	for i, x := range a.States {
		if x == s {
			return i
		}
	}
	panic("unknown state " + s.Name)
}

// luaHeader documents the script's interface for callers in any language.
func luaHeader(w *writer, sp *Spec, a *Algorithm, v *View) {
	luaTitle(w, a, v)
	w.line("--")
	w.line("-- KEYS (every key starts with the hash tag {key}, so one call stays in one")
	w.line("-- Redis Cluster slot; key is the limited identity and must not be empty):")
	for i, s := range a.States {
		w.line("--   KEYS[%d]  %s  %s: %s", i+1, keyTemplate(s), s.Kind, s.Doc)
		for _, f := range s.Fields {
			w.line("--              %s: %s (in [%s, %s])", f.Name, f.Doc, Format(f.Min), Format(f.Max))
		}
		if s.Collection() {
			w.line("--              at most %s entries, %s", Format(s.MaxEntries), entryLayout(s))
			for _, f := range s.Entry {
				if f.Type == Str {
					w.line("--                %s: %s (a string)", f.Name, f.Doc)
				} else {
					w.line("--                %s: %s (in [%s, %s])", f.Name, f.Doc, Format(f.Min), Format(f.Max))
				}
			}
		}
	}
	if v == nil {
		w.line("--   KEYS[%d]  {<key>}:rq:<id>, optional: a request key (docs/semantics.md, \"Request ids\"):", len(a.States)+1)
		w.line("--              a retry of a request charged within REQUEST_MS gets its reply again")
	}
	w.line("--")
	ints, strs, first := luaArgs(sp, a, v)
	w.line("-- ARGV (decimal integers, but for strings):")
	for i, in := range ints {
		w.line("--   ARGV[%d]  %s in [%d, %d]: %s", i+1, in.Arg, in.Min, in.Max, inputDoc(in))
	}
	if luaTakesForce(v) {
		w.line("--   ARGV[%d]  force: %s", len(ints)+1, forceArgDoc)
	}
	for i, in := range strs {
		w.line("--   ARGV[%d]  %s: a string of at most %d bytes (may be empty): %s", first-len(strs)+i, in.Name, in.MaxLen, in.Doc)
	}
	for i, p := range a.Params {
		opt := ""
		if p.Default != nil {
			opt = fmt.Sprintf(" (optional, default %d)", *p.Default)
		}
		w.line("--   ARGV[%d]  %s in [%d, %d]%s: %s", i+first, p.Name, p.Min, p.Max, opt, p.Doc)
	}
	for _, r := range a.Requires {
		w.line("--   and %s", Format(r.Cond))
	}
	w.line("--")
	if v == nil {
		w.line("-- Reply: an array of %d integers:", len(sp.Reply))
		for i, f := range sp.Reply {
			t := ""
			if f.Type == Bool {
				t = " (1 or 0)"
			}
			w.line("--   [%d] %s%s: %s", i+1, f.Name, t, f.Doc)
		}
	} else {
		var names []string
		for _, f := range viewShow(v).Fields {
			names = append(names, f.Name)
		}
		w.line("-- Reply: an array of entries of %s, in order, each an array {%s};", showState(v).Name, strings.Join(names, ", "))
		w.line("-- empty when there are none. It writes nothing.")
	}
	w.line("--")
	w.line("-- Errors (nothing is written): BADINPUT <message> for refused input (a")
	w.line("-- wrong number of arguments, a key beginning with '}' among them);")
	w.line("-- BADSTATE <message> when a stored field is not an integer; WRONGTYPE when")
	w.line("-- a key holds another Redis type.")
	if a.Clock != nil {
		w.line("--")
		w.line("-- Time: a key's state records its last admission (%s). A request", a.Clock.State.Name+"."+a.Clock.Name)
		w.line("-- up to MAX_SKEW_MS (%d ms) behind it is decided at that time; further", sp.MaxSkew)
		w.line("-- behind, the state is not trusted: the request is decided as on a fresh")
		w.line("-- key, and an admission replaces the state (docs/semantics.md).")
	}
}

// luaTitle names a script and says what it does: the algorithm's doc or
// the view's.
func luaTitle(w *writer, a *Algorithm, v *View) {
	title, doc := a.Name, a.Doc
	if v != nil {
		title, doc = fmt.Sprintf("%s: the view %s of %s", luaScriptName(a, v), v.Name, a.Name), v.Doc
	}
	w.line("-- %s", title)
	w.line("--")
	for _, l := range strings.Split(doc, "\n") {
		w.line("--   %s", l)
	}
}

// entryLayout says how a collection stores its entries.
func entryLayout(s *State) string {
	var names []string
	for _, f := range s.Entry {
		names = append(names, f.Name)
	}
	switch s.Kind {
	case ZSet:
		return "each a member " + strings.Join(names, ":") + " scored by " + names[0] + ":"
	case List:
		return "in arrival order, each " + strings.Join(names, ":") + ":"
	}
	return "each a field named by " + names[0] + " holding " + names[1] + ":"
}

// viewShow is the statement that ends a view.
func viewShow(v *View) *Show { return v.Body[len(v.Body)-1].(*Show) }

// showState is the collection a view returns.
func showState(v *View) *State { return viewShow(v).State }

// keyTemplate is a state's key for any key, its parameters named:
// {<key>}:sl:<window_ms>.
func keyTemplate(s *State) string {
	return "{<key>}" + keySuffix(s, func(p *Param) string { return "<" + p.Name + ">" })
}

// keySuffix is what follows a key's hash tag, each parameter it names as
// value renders it.
func keySuffix(s *State, value func(*Param) string) string {
	var b strings.Builder
	for _, p := range s.KeyParts {
		if p.Param == nil {
			b.WriteString(p.Text)
		} else {
			b.WriteString(value(p.Param))
		}
	}
	return b.String()
}

func keyTemplates(a *Algorithm) string {
	var out []string
	for _, s := range a.States {
		out = append(out, keyTemplate(s))
	}
	return strings.Join(out, " ")
}

// luaStr quotes s as a Lua string literal.
func luaStr(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`)
	return "'" + r.Replace(s) + "'"
}

// writer accumulates generated text.
type writer struct {
	b strings.Builder
	// commitOnly guards every write: the decision of a policy's limit,
	// which writes only once every limit has admitted. In Lua each run of
	// writes runs under "if commit then", the limit's string state is read
	// once per call (its __cache) and the reply is returned as seven
	// values; in Go each write runs under "if commit".
	commitOnly bool
	// codeAt is where a Lua script's own code begins: after its header
	// and the helpers it uses (luaAssemble sets it).
	codeAt int
	// assign writes the parsed arguments into locals declared before
	// (luaExactArgs), instead of declaring them.
	assign bool
	// inner are blocks of the code that declare the helpers they use
	// themselves (see luaAssemble).
	inner []string
	// aggs, in the Go of a table, are the methods that compute its
	// aggregates (emit_go_agg.go).
	aggs *goAggs
	// pieces marks the pieces a composed script takes (luaPieceMark).
	pieces bool
	// caches, in a policy's limit's decision, are where each string
	// state is kept once read (see luaMaker).
	caches map[*State]string
}

// decl is what begins the statement that sets a parsed argument: "local "
// unless w assigns.
func (w *writer) decl() string {
	if w.assign {
		return ""
	}
	return "local "
}

func (w *writer) line(format string, args ...any) {
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

func (w *writer) raw(s string) { w.b.WriteString(s) }

// call begins a command that writes: redis.call, or in a policy's limit
// (commitOnly) the helper write, which runs it now when the limit's
// decision commits, or keeps it for once every limit has admitted.
func (w *writer) call() string {
	if w.commitOnly {
		return "write(commit, "
	}
	return "redis.call("
}

// text writes a block of fixed text, each {name} in it replaced by its
// value: pairs are "{name}", value, ...
func (w *writer) text(t string, pairs ...string) { w.raw(strings.NewReplacer(pairs...).Replace(t)) }

// goFileHeader begins a generated Go file: generated from source, of
// package pkg.
func goFileHeader(w *writer, source, pkg string) {
	w.line("// Code generated by cmd/gen from %s. DO NOT EDIT.", source)
	w.line("")
	w.line("package %s", pkg)
	w.line("")
}

// goImports writes an import block: the standard packages std, then the
// others; an empty path (a condition's false) is left out, and a path
// after "_ " is imported for its side effects.
func goImports(w *writer, std []string, others ...string) {
	w.line("import (")
	for i, group := range [][]string{std, others} {
		if i > 0 {
			w.line("")
		}
		for _, p := range group {
			if name, path, ok := strings.Cut(p, " "); ok {
				w.line("%s %q", name, path)
			} else if p != "" {
				w.line("%q", p)
			}
		}
	}
	w.line(")")
}

// luaErrors declares ALG, the algorithm's prefix in errors (unless alg
// is empty: a policy's function takes it) and bad, which refuses input.
// (A stored value is refused where it is read: luaCorrupt.)
func luaErrors(w *writer, alg string) {
	if alg != "" {
		w.line("local ALG = %s", luaStr(alg+": "))
	}
	w.line("local function bad(msg)")
	w.line("  return redis.error_reply('BADINPUT ' .. ALG .. msg)")
	w.line("end")
}

func (w *writer) bytes() []byte { return []byte(w.b.String()) }
