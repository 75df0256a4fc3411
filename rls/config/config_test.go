// The tests reproduce those of the reference (envoyproxy/ratelimit,
// test/config/config_test.go) that concern loading, refusal and the limit
// a descriptor gets, each case named after the reference test it
// reproduces, on our own files in testdata/ with the reference's domains,
// keys, values and limits; then our extension, our edge cases and
// LoadDir.
//
// Where our loader differs from the reference's (which reads with
// yaml.v2), and why:
//
//   - YAML 1.2 (yaml.v3) against YAML 1.1 (yaml.v2): yes, no, on, off, y
//     and n are strings in v3. A mapping key spelled so is refused either
//     way (the reference: "not a string"; here: an unknown key); as a
//     value (value: yes) both read the text "yes"; as a flag (shadow_mode:
//     yes) we read them unquoted as booleans, as v2 does, so that files
//     keep their meaning.
//   - The reference's key check refuses a float or an integer beyond
//     int64 anywhere ("error checking config", even for value: 1.5); we
//     read a scalar where a string belongs as its text ("1.5"), as v2
//     reads the scalars it does not refuse.
//   - A key set twice in one mapping is refused; yaml.v2 kept the last
//     silently. A merge key (<<) lets the mapping's own keys win wherever
//     it is written, as YAML (and yaml.v3) say; yaml.v2 let the later win.
//   - Bad YAML: yaml.v3's message and line. v3 names no line for an
//     error on a file's first line, and Line is then 0: the reference's
//     bad_yaml.yaml, three quotes alone, is "line 2" for v2 and line 0
//     here; ours has a comment line above them, and says line 2.
//   - Aliases in a circle, or expanding a file past a budget of nodes,
//     are refused with their line (yaml.v2 has a different alias limit).
//   - Every refusal has the line of its node and our wording; the
//     reference's messages name only the file.
//   - Our keys (algorithm, params, holds) are refused by the reference
//     as unknown.
//   - RateLimit.FullKey is always the descriptor's path in the file; the
//     reference's GetLimit rewrites it to its stats name (for
//     detailed_metric, value_to_metric, wildcards): stats names are not
//     this package's.
//
// Kept as the reference has it, though surprising:
//
//   - A key the reference knows, written where it does not read it
//     (shadow_mode inside rate_limit, domain in a descriptor), is ignored,
//     not refused (extra_forms.yaml).
//   - Only the first YAML document of a file is read.
//   - unlimited: true with a unit that is none (unit: foo) is accepted.
//   - A composite key is key + "_" + value, so key a_b with value c and
//     key a with value b_c are one descriptor; a wildcard's prefix is
//     matched against the whole key_value, so a descriptor with no value
//     whose key ends in '*' is a wildcard too, and may have
//     share_threshold.
//   - MergeDomains merges only the top level: a key and value already
//     there is refused even if their nested descriptors differ.

package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/limitspec/limitspec"
)

// want is the limit a descriptor should get.
type want struct {
	fullKey                                            string
	unit                                               Unit
	rpu                                                uint32
	name                                               string
	unlimited, denyAll, shadow, quota, detailed, holds bool
	algorithm                                          string
	params                                             map[string]int64
	limit                                              limitspec.Limit
}

// fixed is a reference limit: rpu per unit, a fixed window of window.
func fixed(fullKey string, unit Unit, rpu uint32, window time.Duration) *want {
	return &want{fullKey: fullKey, unit: unit, rpu: rpu, limit: limitspec.FixedWindow{Limit: int64(rpu), Window: window}}
}

// and changes w by f and returns it.
func (w *want) and(f func(*want)) *want {
	f(w)
	return w
}

// query is a descriptor and what Match should find for it: no limit
// (want nil), or want and, if not "", the Tag.
type query struct {
	domain  string
	entries []Entry
	want    *want
	tag     string
}

// es makes entries of key, value, key, value, ...
func es(kv ...string) []Entry {
	var out []Entry
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, Entry{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

// refusal is the *Error a load should return: its file, line (-1 not
// checked) and a part of its reason.
type refusal struct {
	file   string
	line   int
	reason string
}

// loadCase is files loaded in order, refused or answering queries.
type loadCase struct {
	name    string
	files   []string // under testdata/
	merge   bool
	refused *refusal
	domains []string // checked if not nil
	queries []query
}

const td = "test-domain"

// Limits of the reference's test files.
var (
	sub1      = fixed(td+".key1_value1.subkey1", Second, 5, time.Second)
	sub1Value = fixed(td+".key1_value1.subkey1_subvalue1", Second, 10, time.Second)
	key2      = fixed(td+".key2", Minute, 20, time.Minute)
	key2Value = fixed(td+".key2_value2", Minute, 30, time.Minute)
)

func referenceLoads() []loadCase {
	return []loadCase{
		{name: "TestBasicConfig", files: []string{"basic_config.yaml"}, domains: []string{td}, queries: []query{
			{domain: "foo_domain"},
			{domain: td},
			{domain: td, entries: es("key1", "something")},
			{domain: td, entries: es("key1", "value1")},
			{domain: td, entries: es("key2", "value2", "subkey", "subvalue")},
			{domain: td, entries: es("key5", "value5", "subkey5", "subvalue")},
			{domain: td, entries: es("key1", "value1", "subkey1", "something"), want: sub1, tag: "test-domain_key1_value1_subkey1_something_"},
			{domain: td, entries: es("key1", "value1", "subkey1", "subvalue1"), want: sub1Value, tag: "test-domain_key1_value1_subkey1_subvalue1_"},
			{domain: td, entries: es("key2", "something"), want: key2, tag: "test-domain_key2_something_"},
			{domain: td, entries: es("key2", "value2"), want: key2Value, tag: "test-domain_key2_value2_"},
			{domain: td, entries: es("key2", "value3")},
			{domain: td, entries: es("key3", "foo"), want: fixed(td+".key3", Hour, 1, time.Hour)},
			{domain: td, entries: es("key4", "foo"), want: fixed(td+".key4", Day, 1, 24*time.Hour).and(func(w *want) { w.name = "key4_rate_limit" })},
			{domain: td, entries: es("key6", "foo"), want: &want{fullKey: td + ".key6", unlimited: true}, tag: "test-domain_key6_foo_"},
			{domain: td, entries: es("key7", "unspecified_value"), want: fixed(td+".key7", Minute, 70, time.Minute).and(func(w *want) { w.detailed = true })},
			{domain: td, entries: es("key7", "another_value"), want: fixed(td+".key7", Minute, 70, time.Minute).and(func(w *want) { w.detailed = true })},
			// Not asserted by the reference, read from the file: a limit with
			// nested descriptors applies to a descriptor that ends at it.
			{domain: td, entries: es("key5", "value5"), want: fixed(td+".key5_value5", Day, 15, 24*time.Hour)},
			{domain: td, entries: es("key5", "value5", "subkey5", "subvalue5"), want: fixed(td+".key5_value5.subkey5_subvalue5", Day, 25, 24*time.Hour)},
		}},
		{name: "TestDomainMerge", files: []string{"merge_domain_key1.yaml", "merge_domain_key2.yaml"}, merge: true, domains: []string{td}, queries: []query{
			{domain: "foo_domain"},
			{domain: td},
			{domain: td, entries: es("key1", "value1"), want: fixed(td+".key1_value1", Minute, 10, time.Minute)},
			{domain: td, entries: es("key2", "value2"), want: fixed(td+".key2_value2", Minute, 20, time.Minute)},
		}},
		{name: "TestShadowModeConfig", files: []string{"shadowmode_config.yaml"}, queries: []query{
			{domain: td, entries: es("key1", "value1", "subkey1", "something"), want: sub1},
			{domain: td, entries: es("key1", "value1", "subkey1", "subvalue1"), want: fixed(td+".key1_value1.subkey1_subvalue1", Second, 10, time.Second).and(func(w *want) { w.shadow = true })},
			{domain: td, entries: es("key2", "something"), want: fixed(td+".key2", Minute, 20, time.Minute).and(func(w *want) { w.shadow = true })},
			{domain: td, entries: es("key2", "value2"), want: key2Value},
		}},
		{name: "TestWildcardConfig", files: []string{"wildcard.yaml"}, queries: wildcardQueries()},
		{name: "TestShareThreshold", files: []string{"share_threshold.yaml"}, queries: shareQueries()},
	}
}

func wildcardQueries() []query {
	wild := fixed(td+".wild_foo*", Minute, 20, time.Minute)
	return []query{
		{domain: td, entries: es("noVal", "foo1"), want: fixed(td+".noVal", Minute, 20, time.Minute), tag: "test-domain_noVal_foo1_"},
		{domain: td, entries: es("noVal", "foo2"), want: fixed(td+".noVal", Minute, 20, time.Minute), tag: "test-domain_noVal_foo2_"},
		// without share_threshold each value has its own counter
		{domain: td, entries: es("wild", "foo1"), want: wild, tag: "test-domain_wild_foo1_"},
		{domain: td, entries: es("wild", "foo2"), want: wild, tag: "test-domain_wild_foo2_"},
		{domain: td, entries: es("nestedWild", "val1", "wild", "goo2"), want: fixed(td+".nestedWild_val1.wild_goo*", Minute, 20, time.Minute)},
		{domain: td, entries: es("wild", "bar")},
		{domain: td, entries: es("noWild", "foo1")},
		{domain: td, entries: es("midWildcard", "barab")}, // as the reference asks it
		{domain: td, entries: es("midWild", "barab")},     // and the key of the file
	}
}

func shareQueries() []query {
	files := fixed(td+".files_files/*", Minute, 100, time.Minute)
	route := fixed(td+".route_api/*.method", Minute, 60, time.Minute)
	shared := fixed(td+".file_test*", Minute, 100, time.Minute)
	return []query{
		// every value under files/* shares one counter
		{domain: td, entries: es("files", "files/a.pdf"), want: files, tag: "test-domain_files_files/*_"},
		{domain: td, entries: es("files", "files/b.csv"), want: files, tag: "test-domain_files_files/*_"},
		{domain: td, entries: es("files", "files/c.txt"), want: files, tag: "test-domain_files_files/*_"},
		{domain: td, entries: es("route", "api/v1", "method", "GET"), want: route, tag: "test-domain_route_api/*_method_GET_"},
		{domain: td, entries: es("route", "api/v2", "method", "GET"), want: route, tag: "test-domain_route_api/*_method_GET_"},
		{domain: td, entries: es("service", "svc/user", "endpoint", "get"),
			want: fixed(td+".service_svc/*.endpoint", Minute, 80, time.Minute).and(func(w *want) { w.detailed = true }),
			tag:  "test-domain_service_svc/*_endpoint_get_"},
		{domain: td, entries: es("nested", "parent", "files", "nested/file1.txt"),
			want: fixed(td+".nested_parent.files_nested/*", Minute, 200, time.Minute), tag: "test-domain_nested_parent_files_nested/*_"},
		{domain: td, entries: es("files", "top/file1.txt", "files", "nested/file1.txt"),
			want: fixed(td+".files_top/*.files_nested/*", Minute, 300, time.Minute), tag: "test-domain_files_top/*_files_nested/*_"},
		// file/* has no share_threshold: its value stays in the tag
		{domain: td, entries: es("path", "path/foo", "file", "file/doc1", "type", "pdf"),
			want: fixed(td+".path_path/*.file_file/*.type", Minute, 120, time.Minute), tag: "test-domain_path_path/*_file_file/doc1_type_pdf_"},
		{domain: td, entries: es("user", "user/alice", "resource", "res/file1", "action", "read"),
			want: fixed(td+".user_user/*.resource_res/*.action", Minute, 150, time.Minute), tag: "test-domain_user_user/*_resource_res/*_action_read_"},
		// the exact value has its own limit and counter; the others share
		{domain: td, entries: es("file", "test1"), want: fixed(td+".file_test1", Minute, 50, time.Minute), tag: "test-domain_file_test1_"},
		{domain: td, entries: es("file", "test2"), want: shared, tag: "test-domain_file_test*_"},
		{domain: td, entries: es("file", "test23"), want: shared, tag: "test-domain_file_test*_"},
		{domain: td, entries: es("file", "test123"), want: shared, tag: "test-domain_file_test*_"},
	}
}

func referenceRefusals() []loadCase {
	return []loadCase{
		{name: "TestEmptyDomain", files: []string{"empty_domain.yaml"}, refused: &refusal{"empty_domain.yaml", 2, "no domain"}},
		{name: "TestDuplicateDomain", files: []string{"basic_config.yaml", "duplicate_domain.yaml"},
			refused: &refusal{"duplicate_domain.yaml", 1, `duplicate domain "test-domain"`}},
		{name: "TestEmptyKey", files: []string{"empty_key.yaml"}, refused: &refusal{"empty_key.yaml", 4, "no key"}},
		{name: "TestDuplicateKey", files: []string{"duplicate_key.yaml"},
			refused: &refusal{"duplicate_key.yaml", 6, `duplicate descriptor "test-domain.key1_value1"`}},
		{name: "TestDuplicateKeyDomainMerge", files: []string{"merge_domain_key1.yaml", "merge_domain_key1.yaml"}, merge: true,
			refused: &refusal{"merge_domain_key1.yaml", 4, `duplicate descriptor "test-domain.key1_value1"`}},
		{name: "TestBadLimitUnit", files: []string{"bad_limit_unit.yaml"},
			refused: &refusal{"bad_limit_unit.yaml", 8, `invalid rate limit unit "foo" (second, minute, hour, day, week, month, year)`}},
		{name: "TestReplacesSelf", files: []string{"replaces_self.yaml"}, refused: &refusal{"replaces_self.yaml", 13, `rate limit "self" replaces itself`}},
		{name: "TestReplacesEmpty", files: []string{"replaces_empty.yaml"}, refused: &refusal{"replaces_empty.yaml", 13, "replaces entry has no name"}},
		{name: "TestBadYaml", files: []string{"bad_yaml.yaml"}, refused: &refusal{"bad_yaml.yaml", 2, "invalid YAML: found unexpected end of stream"}},
		{name: "TestMisspelledKey", files: []string{"misspelled_key.yaml"}, refused: &refusal{"misspelled_key.yaml", 6, `unknown key "ratelimit"`}},
		{name: "TestMisspelledKey", files: []string{"misspelled_key2.yaml"}, refused: &refusal{"misspelled_key2.yaml", 8, `unknown key "requestsperunit"`}},
		{name: "TestNonStringKey", files: []string{"non_string_key.yaml"}, refused: &refusal{"non_string_key.yaml", 2, "key 0.25 (float) is not a string"}},
		{name: "TestNonMapList", files: []string{"non_map_list.yaml"}, refused: &refusal{"non_map_list.yaml", 4, `list of mappings (key, value, rate_limit, ...), not of "a"`}},
		{name: "TestUnlimitedWithRateLimitUnit", files: []string{"unlimited_with_unit.yaml"},
			refused: &refusal{"unlimited_with_unit.yaml", 7, `unlimited: true takes no unit`}},
	}
}

func extensionCases() []loadCase {
	gcra := &want{fullKey: "ext.user", algorithm: "gcra", holds: true, params: map[string]int64{"burst": 20, "rate": 10, "period_ms": 1000},
		limit: limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second}}
	daily := &want{fullKey: "ext.daily", name: "daily", unit: Day, rpu: 1000, algorithm: "sliding_log",
		params: map[string]int64{"limit": 1000, "window_ms": 86400000}, limit: limitspec.SlidingLog{Limit: 1000, Window: 24 * time.Hour}}
	inflight := &want{fullKey: "ext.inflight", algorithm: "concurrency", holds: true, params: map[string]int64{"limit": 5}, limit: limitspec.Concurrency{Limit: 5}}
	return []loadCase{
		{name: "algorithms", files: []string{"ext_algorithms.yaml"}, queries: []query{
			{domain: "ext", entries: es("user", "alice"), want: gcra, tag: "ext_user_alice_"},
			{domain: "ext", entries: es("daily", "alice"), want: daily},
			{domain: "ext", entries: es("inflight", "x"), want: inflight},
			{domain: "ext", entries: es("plain", "x"), want: fixed("ext.plain", Second, 5, time.Second)},
			{domain: "ext", entries: es("closed", "x"), want: &want{fullKey: "ext.closed", unit: Hour, denyAll: true}},
		}},
		{name: "unknown algorithm", files: []string{"ext_unknown_algorithm.yaml"}, refused: &refusal{"ext_unknown_algorithm.yaml", 6, `unknown algorithm "fortnightly"`}},
		{name: "missing parameter", files: []string{"ext_missing_param.yaml"}, refused: &refusal{"ext_missing_param.yaml", 7, "gcra: missing parameter period_ms"}},
		{name: "parameter out of domain", files: []string{"ext_bad_param.yaml"},
			refused: &refusal{"ext_bad_param.yaml", 9, "gcra: parameter burst must be an integer in [1, 1000000000000], got 0"}},
		{name: "unknown parameter", files: []string{"ext_unknown_param.yaml"}, refused: &refusal{"ext_unknown_param.yaml", 11, `gcra: unknown parameter "bursts"`}},
		{name: "parameter not an integer", files: []string{"ext_param_not_integer.yaml"},
			refused: &refusal{"ext_param_not_integer.yaml", 7, `parameter burst must be a whole number`}},
		{name: "params without algorithm", files: []string{"ext_params_without_algorithm.yaml"},
			refused: &refusal{"ext_params_without_algorithm.yaml", 8, "params needs algorithm"}},
		{name: "concurrency without holds", files: []string{"ext_concurrency_without_holds.yaml"},
			refused: &refusal{"ext_concurrency_without_holds.yaml", 6, "needs holds: true"}},
		{name: "unlimited with algorithm", files: []string{"ext_unlimited_with_algorithm.yaml"},
			refused: &refusal{"ext_unlimited_with_algorithm.yaml", 7, `unlimited: true and algorithm "gcra"`}},
		{name: "algorithm outside rate_limit", files: []string{"ext_misplaced_algorithm.yaml"},
			refused: &refusal{"ext_misplaced_algorithm.yaml", 5, `key "algorithm" belongs inside rate_limit`}},
		{name: "requests_per_unit without unit", files: []string{"ext_rpu_without_unit.yaml"},
			refused: &refusal{"ext_rpu_without_unit.yaml", 7, "requests_per_unit is reported per unit"}},
	}
}

func edgeCases() []loadCase {
	std := fixed("anchors.a", Minute, 7, time.Minute)
	return []loadCase{
		{name: "share_threshold without wildcard", files: []string{"extra_share_not_wildcard.yaml"},
			refused: &refusal{"extra_share_not_wildcard.yaml", 6, `share_threshold is only for a wildcard value`}},
		{name: "anchors and merge keys", files: []string{"extra_anchors.yaml"}, queries: []query{
			{domain: "anchors", entries: es("a", "x"), want: std},
			{domain: "anchors", entries: es("b", "x"), want: fixed("anchors.b", Minute, 7, time.Minute)},
			{domain: "anchors", entries: es("c", "x"), want: fixed("anchors.c", Minute, 9, time.Minute)},
		}},
		{name: "alias cycle", files: []string{"extra_alias_cycle.yaml"}, refused: &refusal{"extra_alias_cycle.yaml", 5, "alias *all is inside the node it refers to"}},
		{name: "billion laughs", files: []string{"extra_laughs.yaml"}, refused: &refusal{"extra_laughs.yaml", -1, "aliases expand the file to more than"}},
		{name: "key set twice", files: []string{"extra_duplicate_mapping_key.yaml"},
			refused: &refusal{"extra_duplicate_mapping_key.yaml", 8, `key "unit" is set twice in one mapping (first at line 5)`}},
		{name: "YAML 1.1 forms and ignored keys", files: []string{"extra_forms.yaml"}, queries: []query{
			{domain: "forms", entries: es("answer", "yes"), want: fixed("forms.answer_yes", Minute, 16, time.Minute).and(func(w *want) { w.shadow = true })},
			{domain: "forms", entries: es("answer", "true")},
			{domain: "forms", entries: es("code", "0123"), want: fixed("forms.code_0123", Hour, 1000, time.Hour).and(func(w *want) { w.quota = true })},
			{domain: "forms", entries: es("ignored", "x"), want: fixed("forms.ignored", Second, 3, time.Second)},
			{domain: "forms", entries: es("none", "x")},
		}},
		{name: "negative requests_per_unit", files: []string{"extra_negative_rpu.yaml"},
			refused: &refusal{"extra_negative_rpu.yaml", 6, `requests_per_unit must be a whole number in [0, 4294967295], not "-1"`}},
		{name: "no unit", files: []string{"extra_no_unit.yaml"}, refused: &refusal{"extra_no_unit.yaml", 4, "rate_limit has no unit"}},
		{name: "not a mapping", files: []string{"extra_not_mapping.yaml"}, refused: &refusal{"extra_not_mapping.yaml", 2, "a file is a mapping"}},
		{name: "empty file", files: []string{"extra_empty.yaml"}, refused: &refusal{"extra_empty.yaml", 0, "no domain"}},
		{name: "first document only", files: []string{"extra_two_documents.yaml"}, domains: []string{"first"}},
		{name: "no files", domains: []string{}},
	}
}

func TestLoad(t *testing.T) {
	var all []loadCase
	for _, cs := range [][]loadCase{referenceLoads(), referenceRefusals(), extensionCases(), edgeCases()} {
		all = append(all, cs...)
	}
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) {
			var files []File
			for _, name := range c.files {
				data, err := os.ReadFile(filepath.Join("testdata", name))
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, File{Name: name, Data: data})
			}
			cfg, err := Load(files, Options{MergeDomains: c.merge})
			if c.refused != nil {
				checkRefusal(t, cfg, err, c.refused)
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if c.domains != nil && !slices.Equal(cfg.Domains(), c.domains) {
				t.Errorf("Domains() = %q, want %q", cfg.Domains(), c.domains)
			}
			for _, q := range c.queries {
				checkMatch(t, cfg, q)
			}
		})
	}
}

func checkRefusal(t *testing.T, cfg *Config, err error, want *refusal) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Load = %v, %v; want an *Error", cfg, err)
	}
	if cfg != nil {
		t.Errorf("Load returned a Config with its error")
	}
	if e.File != want.file || want.line >= 0 && e.Line != want.line || !strings.Contains(e.Reason, want.reason) {
		t.Errorf("Load: %v\nwant %s:%d: ...%s...", err, want.file, want.line, want.reason)
	}
}

func checkMatch(t *testing.T, cfg *Config, q query) {
	t.Helper()
	m := cfg.Match(q.domain, q.entries)
	if q.want == nil {
		if m.Limit != nil || m.Tag != "" {
			t.Errorf("Match(%q, %v) = %+v, want no limit", q.domain, q.entries, m)
		}
		return
	}
	if m.Limit == nil {
		t.Errorf("Match(%q, %v): no limit, want %s", q.domain, q.entries, q.want.fullKey)
		return
	}
	if got := wantOf(m.Limit); !equalWant(got, q.want) {
		t.Errorf("Match(%q, %v) = %+v\nwant %+v", q.domain, q.entries, got, *q.want)
	}
	if q.tag != "" && m.Tag != q.tag {
		t.Errorf("Match(%q, %v).Tag = %q, want %q", q.domain, q.entries, m.Tag, q.tag)
	}
}

// wantOf is what a test compares of a limit.
func wantOf(r *RateLimit) want {
	return want{fullKey: r.FullKey, unit: r.Unit, rpu: r.RequestsPerUnit, name: r.Name,
		unlimited: r.Unlimited, denyAll: r.DenyAll, shadow: r.ShadowMode, quota: r.QuotaMode, detailed: r.DetailedMetric,
		holds: r.Holds, algorithm: r.Algorithm, params: r.Params, limit: r.Limit}
}

// equalWant compares got with w, maps and limits by value.
func equalWant(got want, w *want) bool {
	return reflect.DeepEqual(got, *w)
}

func TestLoadDir(t *testing.T) {
	cfg, err := LoadDir(filepath.Join("testdata", "dir"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// a.yaml and b.yml; not notes.txt, nor the directory sub.yaml
	if got := cfg.Domains(); !slices.Equal(got, []string{"dir-a", "dir-b"}) {
		t.Errorf("Domains() = %q", got)
	}
	checkMatch(t, cfg, query{domain: "dir-b", entries: es("k", "v"), want: fixed("dir-b.k", Minute, 2, time.Minute), tag: "dir-b_k_v_"})

	_, err = LoadDir(filepath.Join("testdata", "baddir"), Options{})
	checkRefusal(t, nil, err, &refusal{filepath.Join("testdata", "baddir", "b_bad.yml"), 4, `invalid rate limit unit "fortnight"`})

	_, err = LoadDir(filepath.Join("testdata", "no such dir"), Options{})
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		t.Errorf("LoadDir of a missing directory: %v, want an *fs.PathError for fs.ErrNotExist", err)
	}
}

func TestErrorString(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{File: "a.yaml", Line: 3, Reason: "bad"}, "a.yaml:3: bad"},
		{Error{File: "a.yaml", Reason: "bad"}, "a.yaml: bad"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%#v.Error() = %q, want %q", c.e, got, c.want)
		}
	}
}

// TestUnits checks the units' lengths against the reference's
// UnitToDivider, and their values against Envoy's enum.
func TestUnits(t *testing.T) {
	for _, c := range []struct {
		u       Unit
		pb      pb.RateLimitResponse_RateLimit_Unit
		name    string
		seconds int64
	}{
		{Unknown, pb.RateLimitResponse_RateLimit_UNKNOWN, "unknown", 0},
		{Second, pb.RateLimitResponse_RateLimit_SECOND, "second", 1},
		{Minute, pb.RateLimitResponse_RateLimit_MINUTE, "minute", 60},
		{Hour, pb.RateLimitResponse_RateLimit_HOUR, "hour", 60 * 60},
		{Day, pb.RateLimitResponse_RateLimit_DAY, "day", 60 * 60 * 24},
		{Week, pb.RateLimitResponse_RateLimit_WEEK, "week", 60 * 60 * 24 * 7},
		{Month, pb.RateLimitResponse_RateLimit_MONTH, "month", 60 * 60 * 24 * 30},
		{Year, pb.RateLimitResponse_RateLimit_YEAR, "year", 60 * 60 * 24 * 365},
	} {
		if Unit(c.pb) != c.u || c.u.String() != c.name || c.u.Seconds() != c.seconds {
			t.Errorf("%v: Unit(pb) %v, String %q, Seconds %d; want %v, %q, %d", c.pb, Unit(c.pb), c.u.String(), c.u.Seconds(), c.u, c.name, c.seconds)
		}
		if c.u != Unknown && (parseUnit(strings.ToUpper(c.name)) != c.u || parseUnit(c.name) != c.u) {
			t.Errorf("parseUnit(%q) = %v", c.name, parseUnit(c.name))
		}
	}
	if Unit(99).String() != "unknown" || Unit(-1).Seconds() != 0 || parseUnit("unknown") != Unknown {
		t.Error("a value that is no unit")
	}
}

func loadTestdata(t testing.TB, name string) *Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Load([]File{{Name: name, Data: data}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestMatchAllocations checks that Match allocates nothing without a
// limit, and only the Tag with one.
func TestMatchAllocations(t *testing.T) {
	cfg := loadTestdata(t, "share_threshold.yaml")
	for _, c := range []struct {
		entries []Entry
		allocs  float64
	}{
		{es("files", "elsewhere/a.pdf"), 0},
		{es("nested", "parent", "files", "elsewhere"), 0},
		{es("files", "files/a.pdf"), 1},
		{es("user", "user/alice", "resource", "res/file1", "action", "read"), 1},
		{es("file", "test1"), 1},
		{es("files", strings.Repeat("x", 300)), 1}, // a key beyond Match's stack buffer
	} {
		if got := testing.AllocsPerRun(100, func() { cfg.Match(td, c.entries) }); got > c.allocs {
			t.Errorf("Match(%v) allocates %v times, want %v", c.entries, got, c.allocs)
		}
	}
}

// TestMatchConcurrent matches from several goroutines (run with -race).
func TestMatchConcurrent(t *testing.T) {
	cfg := loadTestdata(t, "share_threshold.yaml")
	done := make(chan bool)
	for range 4 {
		go func() {
			for range 1000 {
				if m := cfg.Match(td, es("files", "files/a.pdf")); m.Tag != "test-domain_files_files/*_" {
					t.Errorf("Tag %q", m.Tag)
				}
			}
			done <- true
		}()
	}
	for range 4 {
		<-done
	}
}

func TestMatchNilConfig(t *testing.T) {
	var c *Config
	if m := c.Match(td, es("k", "v")); m.Limit != nil || c.Domains() != nil {
		t.Error("a nil Config limits nothing and has no domains")
	}
}

// FuzzLoad loads any bytes: never a panic, and every refusal an *Error.
func FuzzLoad(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Load([]File{{Name: "f.yaml", Data: data}}, Options{})
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("error %v (%T) is no *Error", err, err)
		}
		if err == nil {
			for _, d := range cfg.Domains() {
				cfg.Match(d, es("key", "value", "k", "v"))
			}
		}
	})
}
