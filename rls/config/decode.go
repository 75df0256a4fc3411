package config

import (
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// node is one descriptor of a domain's tree; a domain is its root.
type node struct {
	key       string           // the descriptor's composite key: key, or key_value
	path      string           // the domain and the composite keys down to it, joined by '.'
	children  map[string]*node // by composite key
	wildcards []*node          // the children whose composite key ends in '*', in file order
	limit     *RateLimit
	share     bool   // share_threshold
	file      string // where it is written, for the refusal of a duplicate
	line      int
}

// The keys each place of a file reads. Every other key the reference
// knows is ignored, as the reference ignores it; any other is refused.
var (
	rootKeys       = []string{"domain", "descriptors"}
	descriptorKeys = []string{"key", "value", "rate_limit", "descriptors", "shadow_mode", "quota_mode",
		"detailed_metric", "value_to_metric", "share_threshold"}
	rateLimitKeys = []string{"unit", "requests_per_unit", "unlimited", "name", "replaces", "algorithm", "params", "holds"}
	replacesKeys  = []string{"name"}
)

// referenceKeys are the keys the reference knows (its validKeys), in
// whatever place.
var referenceKeys = map[string]bool{
	"domain": true, "key": true, "value": true, "descriptors": true, "rate_limit": true, "unit": true,
	"requests_per_unit": true, "unlimited": true, "shadow_mode": true, "quota_mode": true, "name": true,
	"replaces": true, "detailed_metric": true, "value_to_metric": true, "share_threshold": true,
}

// ourKeys are the keys of our extension; they belong inside rate_limit.
var ourKeys = map[string]bool{"algorithm": true, "params": true, "holds": true}

// add loads file f into c: into a new domain, or into the domain's
// existing tree when opts.MergeDomains lets two files share a domain.
func (c *Config) add(f File, opts Options) error {
	d := &decoder{file: f.Name}
	root, err := d.parse(f.Data)
	if err != nil {
		return err
	}
	got := map[string]pair{}
	if !isNull(root) {
		if root = deref(root); root.Kind != yaml.MappingNode {
			return d.errAt(root, "a file is a mapping of domain and descriptors, not %s", describe(root))
		}
		if got, err = d.known(root, "the file", rootKeys); err != nil {
			return err
		}
	}
	domain, err := d.str(got["domain"].value, "domain")
	if err != nil {
		return err
	}
	if domain == "" {
		at := root
		if p, ok := got["domain"]; ok {
			at = p.value
		}
		return d.errAt(at, "the file has no domain (domain: must name one)")
	}
	dom := c.domains[domain]
	if dom != nil && !opts.MergeDomains {
		return d.errAt(got["domain"].value, "duplicate domain %q (first in %s; Options.MergeDomains merges the files of a domain)", domain, dom.file)
	}
	if dom == nil {
		dom = &node{path: domain, file: f.Name}
		c.domains[domain] = dom
	}
	return d.descriptors(got["descriptors"].value, dom)
}

// known reads mapping m's pairs, by key, for the keys of its place
// (where names it in errors). A key the reference knows but does not
// read here is skipped, once checked as the reference checks it; a key
// of ours elsewhere than in rate_limit, or any other, is refused.
func (d *decoder) known(m *yaml.Node, where string, keys []string) (map[string]pair, error) {
	ps, err := d.fields(m)
	if err != nil {
		return nil, err
	}
	got := make(map[string]pair, len(ps))
	for _, p := range ps {
		name := p.key.Value
		switch {
		case slices.Contains(keys, name):
			got[name] = p
		case referenceKeys[name]:
			if err := d.checkIgnored(p.value); err != nil {
				return nil, err
			}
		case ourKeys[name]:
			return nil, d.errAt(p.key, "key %q belongs inside rate_limit, not in %s", name, where)
		default:
			return nil, d.errAt(p.key, "unknown key %q in %s (accepted: %s)", name, where, strings.Join(keys, ", "))
		}
	}
	return got, nil
}

// checkIgnored checks a value the reference ignores as the reference
// checks every value: its mappings' keys are strings that it knows, its
// lists' items are mappings.
func (d *decoder) checkIgnored(n *yaml.Node) error {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		ps, err := d.fields(n)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if !referenceKeys[p.key.Value] {
				return d.errAt(p.key, "unknown key %q", p.key.Value)
			}
			if err := d.checkIgnored(p.value); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for _, it := range n.Content {
			if deref(it).Kind != yaml.MappingNode {
				return d.errAt(it, "a list holds mappings, not %s", describe(it))
			}
			if err := d.checkIgnored(it); err != nil {
				return err
			}
		}
	}
	return nil
}

// descriptors reads the list of descriptors v into parent's children.
func (d *decoder) descriptors(v *yaml.Node, parent *node) error {
	if isNull(v) {
		return nil
	}
	if list := deref(v); list.Kind != yaml.SequenceNode {
		return d.errAt(list, "descriptors is a list of descriptors, not %s", describe(list))
	}
	for _, item := range deref(v).Content {
		m := deref(item)
		if m.Kind != yaml.MappingNode {
			return d.errAt(item, "descriptors is a list of mappings (key, value, rate_limit, ...), not of %s", describe(item))
		}
		child, err := d.descriptor(item, m, parent.path)
		if err != nil {
			return err
		}
		if err := insert(parent, child); err != nil {
			return err
		}
	}
	return nil
}

// insert adds child to parent's children, refusing a second descriptor
// of one composite key (the first may be in an earlier file of a merged
// domain).
func insert(parent, child *node) error {
	if first, ok := parent.children[child.key]; ok {
		return &Error{File: child.file, Line: child.line, Reason: "duplicate descriptor " + strconv.Quote(child.path) +
			": this key and value are already at this level (first at " + first.file + ":" + strconv.Itoa(first.line) + ")"}
	}
	if parent.children == nil {
		parent.children = map[string]*node{}
	}
	parent.children[child.key] = child
	if strings.HasSuffix(child.key, "*") {
		parent.wildcards = append(parent.wildcards, child)
	}
	return nil
}

// descriptor reads the descriptor m, written at item (m, or an alias
// of it), under the path parentPath.
func (d *decoder) descriptor(item, m *yaml.Node, parentPath string) (*node, error) {
	got, err := d.known(m, "a descriptor", descriptorKeys)
	if err != nil {
		return nil, err
	}
	key, err := d.str(got["key"].value, "key")
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, d.errAt(item, "descriptor has no key (key: must name one)")
	}
	value, err := d.str(got["value"].value, "value")
	if err != nil {
		return nil, err
	}
	n := &node{key: key, file: d.file, line: item.Line}
	if value != "" {
		n.key += "_" + value
	}
	n.path = parentPath + "." + n.key
	var fl [5]bool
	for i, name := range [...]string{"shadow_mode", "quota_mode", "detailed_metric", "value_to_metric", "share_threshold"} {
		if fl[i], err = d.flag(got[name].value, name); err != nil {
			return nil, err
		}
	}
	if n.share = fl[4]; n.share && !strings.HasSuffix(n.key, "*") {
		return nil, d.errAt(got["share_threshold"].key,
			"share_threshold is only for a wildcard value (one ending in '*'), and this descriptor is %q", n.key)
	}
	if p, ok := got["rate_limit"]; ok && !isNull(p.value) {
		if n.limit, err = d.rateLimit(p, n.path); err != nil {
			return nil, err
		}
		n.limit.ShadowMode, n.limit.QuotaMode, n.limit.DetailedMetric = fl[0], fl[1], fl[2]
	}
	return n, d.descriptors(got["descriptors"].value, n)
}
