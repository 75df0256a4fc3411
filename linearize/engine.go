package linearize

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// A state is one state of the oracle's model of one identity value: the
// node of a graph whose edges are the inputs applied. Two states are
// equal when they are the same node: an engine interns its states by the
// fingerprint of the oracle's data after the inputs that led there (or,
// when the data cannot be fingerprinted, by the sequence of those
// inputs), so that linearizations reaching the same data in different
// orders meet. A state is immutable once interned, but for its memo of
// steps, which its engine's mutex guards.
type state struct {
	eng *engine
	id  uint64
	// parent and in are the path that first reached the state: parent's
	// data with in applied; depth is its length. The oracle's models
	// cannot be copied, so a state's model is made by replaying its path
	// on a fresh one.
	parent *state
	in     Input
	depth  int
	key    string // its fingerprint, or "seq:" and its inputs' keys
	// made is the outcome of the input that first made the state, for
	// the visualization.
	made  Output
	steps map[string]stepped // by the input's key
}

// stepped is the outcome of an input applied to a state, and the state
// after it (the same state when the input changed nothing).
type stepped struct {
	out  Output
	next *state
}

// ids numbers the states of every engine, for Hash.
var ids atomic.Uint64

// engine holds the states of one identity value and the oracle models
// that are at some of them ("live"), so that the step after a step rarely
// needs a replay.
type engine struct {
	mu    sync.Mutex
	spec  Spec
	value string
	root  *state
	byKey map[string]*state
	live  map[*state]*oracleModel
}

// maxLive bounds the models an engine keeps at states.
const maxLive = 64

// newEngine is the engine of spec for the identity value value, whose
// root is a fresh model's state.
func newEngine(spec Spec, value string) (*engine, error) {
	m, err := newOracleModel(spec, value)
	if err != nil {
		return nil, err
	}
	e := &engine{spec: spec, value: value, byKey: map[string]*state{}, live: map[*state]*oracleModel{}}
	e.root = e.intern(nil, Input{}, m, Output{})
	e.live[e.root] = m
	return e, nil
}

// step applies in to s: its outcome and the state after it.
func (e *engine) step(s *state, in Input) stepped {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := in.key()
	if r, ok := s.steps[k]; ok {
		return r
	}
	m := e.modelAt(s)
	out := m.run(in)
	next := e.intern(s, in, m, out)
	e.park(next, m)
	r := stepped{out: out, next: next}
	s.steps[k] = r
	return r
}

// intern is the state of m, which is parent's with in applied (the root
// when parent is nil): the state of that key if one is known, else a new
// one.
func (e *engine) intern(parent *state, in Input, m *oracleModel, made Output) *state {
	key, ok := fingerprint(m.state())
	switch {
	case !ok && parent == nil:
		key = "seq:"
	case !ok:
		key = parent.key + "|" + in.key()
	}
	if s, ok := e.byKey[key]; ok {
		return s
	}
	s := &state{eng: e, id: ids.Add(1), parent: parent, in: in, key: key, made: made, steps: map[string]stepped{}}
	if parent != nil {
		s.depth = parent.depth + 1
	}
	e.byKey[key] = s
	return s
}

// modelAt takes a model at s: the one parked there, or one remade from the
// nearest state on s's path that has one (a fresh model at the root).
func (e *engine) modelAt(s *state) *oracleModel {
	var path []*state
	at := s
	m := e.live[at]
	for m == nil && at.parent != nil {
		path = append(path, at)
		at = at.parent
		m = e.live[at]
	}
	delete(e.live, at)
	if m == nil { // at is the root
		fresh, err := newOracleModel(e.spec, e.value)
		if err != nil {
			panic("linearize: a model made once could not be made again: " + err.Error())
		}
		m = fresh
	}
	for i := len(path) - 1; i >= 0; i-- {
		m.run(path[i].in)
	}
	if len(path) > 0 {
		if key, ok := fingerprint(m.state()); ok && key != s.key {
			panic(fmt.Sprintf("linearize: replaying state %d's path reached other data: the oracle is not deterministic", s.id))
		}
	}
	return m
}

// park keeps m, which is at s, for the next step from s, unless s has
// one already; at most maxLive are kept.
func (e *engine) park(s *state, m *oracleModel) {
	if _, ok := e.live[s]; ok {
		return
	}
	if len(e.live) >= maxLive {
		for k := range e.live { // any one
			delete(e.live, k)
			break
		}
	}
	e.live[s] = m
}
