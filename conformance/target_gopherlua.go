package conformance

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/limitspec/limitspec/internal/standin"
	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// LuaTarget runs the generated Lua in gopher-lua, with a redis.call of
// this package's own over the stand-in for Redis's commands (package
// standin).
type LuaTarget struct {
	L      *glua.LState
	protos map[string]*glua.FunctionProto
	store  *standin.Store
	// inputs counts the KEYS and ARGV of the scripts called, so that
	// tests can bound what a script is given.
	inputs int64
}

// NewLuaTarget compiles every generated script once.
func NewLuaTarget() (*LuaTarget, error) {
	t := &LuaTarget{L: glua.NewState(), protos: map[string]*glua.FunctionProto{}, store: standin.New()}
	for name, src := range scriptSources() {
		chunk, err := parse.Parse(strings.NewReader(src), name+".lua")
		if err != nil {
			return nil, fmt.Errorf("%s.lua: %v", name, err)
		}
		proto, err := glua.Compile(chunk, name+".lua")
		if err != nil {
			return nil, fmt.Errorf("%s.lua: %v", name, err)
		}
		t.protos[name] = proto
	}
	redis := t.L.NewTable()
	t.L.SetField(redis, "call", t.L.NewFunction(func(L *glua.LState) int { return t.redisCall(L, false) }))
	t.L.SetField(redis, "pcall", t.L.NewFunction(func(L *glua.LState) int { return t.redisCall(L, true) }))
	t.L.SetField(redis, "error_reply", t.L.NewFunction(func(L *glua.LState) int {
		L.Push(errTable(L, L.CheckString(1)))
		return 1
	}))
	t.L.SetField(redis, "status_reply", t.L.NewFunction(func(L *glua.LState) int {
		tbl := L.NewTable()
		L.SetField(tbl, "ok", glua.LString(L.CheckString(1)))
		L.Push(tbl)
		return 1
	}))
	t.L.SetGlobal("redis", redis)
	return t, nil
}

func (t *LuaTarget) Name() string { return "gopherlua" }

func (t *LuaTarget) Begin(*Vector) error {
	t.store = standin.New()
	return nil
}

func (t *LuaTarget) Decide(r Request) Outcome {
	ret, c, o := t.run(r, decideCall, "")
	if o != nil {
		return *o
	}
	return luaReply(ret, c)
}

func (t *LuaTarget) View(view string, r Request) Outcome {
	ret, _, o := t.run(r, viewCall, view)
	if o != nil {
		return *o
	}
	return luaEntries(ret)
}

func (t *LuaTarget) Reset(r Request) Outcome {
	ret, _, o := t.run(r, resetCall, "")
	if o != nil {
		return *o
	}
	if tbl, ok := ret.(*glua.LTable); ok {
		if msg, ok := tbl.RawGetString("err").(glua.LString); ok {
			return errorOutcome(string(msg))
		}
	}
	if _, ok := ret.(glua.LNumber); !ok {
		return failure("BADREPLY", fmt.Sprintf("reset reply is a %s, want a number", ret.Type()))
	}
	return Outcome{}
}

// run prepares r's call of the kind given and runs it: its value and the
// call, or the outcome of its refusal or of the error it raised.
func (t *LuaTarget) run(r Request, kind callKind, view string) (glua.LValue, scriptCall, *Outcome) {
	c, refused := prepareCall("", r, kind, view)
	if refused != nil {
		return nil, c, refused
	}
	ret, o := t.call(c)
	return ret, c, o
}

// call runs one compiled script with its KEYS and ARGV and returns its
// value, or the outcome of the error it raised.
func (t *LuaTarget) call(c scriptCall) (glua.LValue, *Outcome) {
	L := t.L
	t.inputs += int64(len(c.keys) + len(c.argv))
	L.SetGlobal("KEYS", stringTable(L, c.keys))
	L.SetGlobal("ARGV", stringTable(L, c.argv))
	L.Push(L.NewFunctionFromProto(t.protos[c.function()]))
	if err := L.PCall(0, 1, nil); err != nil {
		o := errorOutcome("ERR " + err.Error())
		if ae, ok := err.(*glua.ApiError); ok {
			if tbl, ok := ae.Object.(*glua.LTable); ok {
				if msg, ok := tbl.RawGetString("err").(glua.LString); ok {
					o = errorOutcome(string(msg))
				}
			}
		}
		return nil, &o
	}
	ret := L.Get(-1)
	L.Pop(1)
	return ret, nil
}

// luaEntries converts a view's return value, an array of arrays of numbers
// and strings, as Redis does.
func luaEntries(v glua.LValue) Outcome {
	tbl, ok := v.(*glua.LTable)
	if !ok {
		return failure("BADREPLY", fmt.Sprintf("reply is a %s, want an array", v.Type()))
	}
	if msg, ok := tbl.RawGetString("err").(glua.LString); ok {
		return errorOutcome(string(msg))
	}
	var out [][]string
	for i := 1; ; i++ {
		row, ok := tbl.RawGetInt(i).(*glua.LTable)
		if !ok {
			break
		}
		var fields []string
		for j := 1; ; j++ {
			switch x := row.RawGetInt(j).(type) {
			case glua.LNumber:
				fields = append(fields, strconv.FormatInt(int64(x), 10))
				continue
			case glua.LString:
				fields = append(fields, string(x))
				continue
			}
			break
		}
		out = append(out, fields)
	}
	return entriesOutcome(out)
}

// luaReply converts the return value of c's script as Redis does, into an
// Outcome.
func luaReply(v glua.LValue, c scriptCall) Outcome {
	tbl, ok := v.(*glua.LTable)
	if !ok {
		return failure("BADREPLY", fmt.Sprintf("reply is a %s, want an array", v.Type()))
	}
	if msg, ok := tbl.RawGetString("err").(glua.LString); ok {
		return errorOutcome(string(msg))
	}
	var ints []int64
	for i := 1; ; i++ {
		n, ok := tbl.RawGetInt(i).(glua.LNumber)
		if !ok {
			break
		}
		ints = append(ints, int64(n)) // Redis truncates numbers to integers
	}
	return c.outcome(ints)
}

// redisCall is redis.call (raising errors) and redis.pcall (returning them).
func (t *LuaTarget) redisCall(L *glua.LState, protected bool) int {
	var args []string
	for i := 1; i <= L.GetTop(); i++ {
		switch v := L.Get(i).(type) {
		case glua.LString:
			args = append(args, string(v))
		case glua.LNumber:
			args = append(args, strconv.FormatFloat(float64(v), 'g', 17, 64))
		default:
			L.RaiseError("Lua redis lib command arguments must be strings or integers")
		}
	}
	if len(args) == 0 {
		L.RaiseError("Please specify at least one argument for this redis lib call")
	}
	r, err := t.store.Do(args[0], args[1:])
	if err != nil {
		tbl := errTable(L, err.Error())
		if protected {
			L.Push(tbl)
			return 1
		}
		L.Error(tbl, 1)
	}
	L.Push(toLua(L, r))
	return 1
}

// toLua converts a command's reply to Lua as Redis does: nil becomes false.
func toLua(L *glua.LState, r standin.Reply) glua.LValue {
	switch r := r.(type) {
	case nil:
		return glua.LFalse
	case int64:
		return glua.LNumber(r)
	case string:
		return glua.LString(r)
	case standin.Status:
		tbl := L.NewTable()
		L.SetField(tbl, "ok", glua.LString(r))
		return tbl
	case []any:
		tbl := L.NewTable()
		for i, x := range r {
			tbl.RawSetInt(i+1, toLua(L, x))
		}
		return tbl
	}
	panic(fmt.Sprintf("reply of type %T", r))
}

func errTable(L *glua.LState, msg string) *glua.LTable {
	tbl := L.NewTable()
	L.SetField(tbl, "err", glua.LString(msg))
	return tbl
}

func stringTable(L *glua.LState, list []string) *glua.LTable {
	tbl := L.NewTable()
	for i, s := range list {
		tbl.RawSetInt(i+1, glua.LString(s))
	}
	return tbl
}

// Keys lists the store's keys, TTLs and contents.
func (t *LuaTarget) Keys() ([]KeyTTL, error) {
	var out []KeyTTL
	for _, k := range t.store.Keys() {
		out = append(out, KeyTTL{Key: k.Name, TTL: k.TTL, Content: k.Content})
	}
	return out, nil
}

func (t *LuaTarget) PlantWrongType(r Request, w WrongType) error {
	for _, k := range wrongTypeKeys("", r, w) {
		// A value of no type the key holds (see wrongTypeKeys).
		if _, err := t.store.Do("DEL", []string{k}); err != nil {
			return err
		}
		plant := []string{"HSET", k, "x", "1"}
		if plantedType(k) == "string" {
			plant = []string{"SET", k, "x"}
		}
		if _, err := t.store.Do(plant[0], plant[1:]); err != nil {
			return err
		}
		if _, err := t.store.Do("PEXPIRE", []string{k, "60000"}); err != nil {
			return err
		}
	}
	return nil
}

func (t *LuaTarget) Close() error {
	t.L.Close()
	return nil
}
