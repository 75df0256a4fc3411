package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// decoder reads one file's node tree; its errors name the file.
type decoder struct {
	file string
}

// errAt is a refusal at n's line (0 for no node).
func (d *decoder) errAt(n *yaml.Node, format string, args ...any) *Error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: d.file, Line: line, Reason: fmt.Sprintf(format, args...)}
}

// parse reads data's first YAML document (as the reference does: a later
// one is not read) and returns its root, nil for an empty document. A
// YAML error gives the line yaml.v3 names, if it names one.
func (d *decoder) parse(data []byte) (root *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil { // yaml.v3 has panicked on malformed input before
			root, err = nil, d.errAt(nil, "invalid YAML: %v", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if num, after, ok := strings.Cut(rest, ": "); ok {
				if n, err := strconv.Atoi(num); err == nil {
					line, msg = n, after
				}
			}
		}
		return nil, &Error{File: d.file, Line: line, Reason: "invalid YAML: " + msg}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	if err := d.checkAliases(doc.Content[0], len(data)); err != nil {
		return nil, err
	}
	return doc.Content[0], nil
}

// deref follows an alias to its anchor's node (checkAliases has
// refused the aliases that lead nowhere or in a circle).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

// isNull is a null or absent value (the empty value of "key:").
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describe names what a node is, for error messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch {
	case isNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// aliasCheck walks a node tree through its aliases, counting the nodes
// it expands to, to refuse a circle of aliases and a file whose aliases
// expand it past a budget (a "billion laughs").
type aliasCheck struct {
	d      *decoder
	state  map[*yaml.Node]int8 // 1 while walking a node's content, 2 after
	size   map[*yaml.Node]int64
	budget int64
}

// checkAliases refuses a tree whose aliases form a circle, or expand it
// to more nodes than 100000 plus 20 per byte of the file.
func (d *decoder) checkAliases(root *yaml.Node, size int) error {
	if !hasAlias(root) {
		return nil
	}
	a := &aliasCheck{d: d, state: map[*yaml.Node]int8{}, size: map[*yaml.Node]int64{}, budget: 100000 + 20*int64(size)}
	_, err := a.walk(root)
	return err
}

// hasAlias reports whether the tree n holds an alias.
func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

// walk returns the number of nodes n expands to.
func (a *aliasCheck) walk(n *yaml.Node) (int64, error) {
	if n.Kind == yaml.AliasNode {
		t := n.Alias
		if t == nil || t.Kind == yaml.AliasNode {
			return 0, a.d.errAt(n, "alias *%s refers to no node", n.Value)
		}
		if a.state[t] == 1 {
			return 0, a.d.errAt(n, "alias *%s is inside the node it refers to", n.Value)
		}
		s, err := a.walk(t)
		return s + 1, err
	}
	switch a.state[n] {
	case 1:
		return 0, a.d.errAt(n, "node is inside itself")
	case 2:
		return a.size[n], nil
	}
	a.state[n] = 1
	total := int64(1)
	for _, c := range n.Content {
		s, err := a.walk(c)
		if err != nil {
			return 0, err
		}
		if total += s; total > a.budget {
			return 0, a.d.errAt(n, "aliases expand the file to more than %d nodes", a.budget)
		}
	}
	a.state[n], a.size[n] = 2, total
	return total, nil
}

// pair is one key and value of a mapping; key is a string scalar.
type pair struct {
	key, value *yaml.Node
}

// fields lists mapping m's pairs: its own, then those its merge keys
// (<<) bring that it does not set itself, the earlier merged mapping
// first (YAML's merge key, as yaml.v3 reads it). A key that is not a
// string, or that m sets twice, is refused.
func (d *decoder) fields(m *yaml.Node) ([]pair, error) {
	var own, merged []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := deref(m.Content[i]), m.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			more, err := d.merged(v)
			if err != nil {
				return nil, err
			}
			merged = append(merged, more...)
			continue
		}
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			return nil, d.errAt(k, "key %s is not a string", describeKey(k))
		}
		if first, ok := seen[k.Value]; ok {
			return nil, d.errAt(k, "key %q is set twice in one mapping (first at line %d)", k.Value, first.Line)
		}
		seen[k.Value] = k
		own = append(own, pair{k, v})
	}
	for _, p := range merged {
		if _, ok := seen[p.key.Value]; !ok {
			seen[p.key.Value] = p.key
			own = append(own, p)
		}
	}
	return own, nil
}

// describeKey names a key that is not a string.
func describeKey(k *yaml.Node) string {
	if k.Kind == yaml.ScalarNode {
		return fmt.Sprintf("%s (%s)", k.Value, strings.TrimPrefix(k.Tag, "!!"))
	}
	return describe(k)
}

// merged lists the pairs a merge key's value brings: a mapping's, or
// those of a list of mappings, the earlier first.
func (d *decoder) merged(v *yaml.Node) ([]pair, error) {
	v = deref(v)
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	var out []pair
	for _, it := range items {
		it = deref(it)
		if it.Kind != yaml.MappingNode {
			return nil, d.errAt(it, "<< merges a mapping or a list of mappings, not %s", describe(it))
		}
		ps, err := d.fields(it)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// str reads a scalar as the text written ("" for null), as the
// reference reads a string field; what names the field in errors.
func (d *decoder) str(n *yaml.Node, what string) (string, error) {
	if isNull(n) {
		return "", nil
	}
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		return "", d.errAt(n, "%s must be a string, not %s", what, describe(n))
	}
	return n.Value, nil
}

// flag reads a boolean: true or false, or as YAML 1.1 (the reference's
// yaml.v2) also reads an unquoted y, yes, on, n, no or off; null is false.
func (d *decoder) flag(n *yaml.Node, what string) (bool, error) {
	if isNull(n) {
		return false, nil
	}
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if err := n.Decode(&b); err == nil {
			return b, nil
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0 {
		switch n.Value {
		case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
			return true, nil
		case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
			return false, nil
		}
	}
	return false, d.errAt(n, "%s must be true or false, not %s", what, describe(n))
}

// integer reads a whole number in [lo, hi].
func (d *decoder) integer(n *yaml.Node, what string, lo, hi int64) (int64, error) {
	n = deref(n)
	var v int64
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil || v < lo || v > hi {
		if lo == math.MinInt64 && hi == math.MaxInt64 {
			return 0, d.errAt(n, "%s must be a whole number, not %s", what, describe(n))
		}
		return 0, d.errAt(n, "%s must be a whole number in [%d, %d], not %s", what, lo, hi, describe(n))
	}
	return v, nil
}
