package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/limitspec/limitspec"
)

// File is one configuration file: its name, used in errors, and its
// contents.
type File struct {
	Name string
	Data []byte
}

// Options change how Load reads several files.
type Options struct {
	// MergeDomains lets several files name one domain: the descriptors
	// of each later file are added to the domain's top level (as the
	// reference's merge option does; a descriptor key and value already
	// there is still refused). Without it a second file of a domain is
	// refused.
	MergeDomains bool
}

// Error is a refused file: the file's name, the line of the offending
// YAML node (0 when there is none, as in an empty file) and why.
type Error struct {
	File   string
	Line   int
	Reason string
}

// Error returns "file:line: reason", or "file: reason" when Line is 0.
func (e *Error) Error() string {
	if e.Line > 0 {
		return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Reason
	}
	return e.File + ": " + e.Reason
}

// Unit is the unit of time of a rate limit's requests_per_unit. Its
// values are those of Envoy's RateLimitResponse.RateLimit.Unit, so that
// pb.RateLimitResponse_RateLimit_Unit(u) is the same unit.
type Unit int

// The units a file may name, in any case. Month is 30 days and Year is
// 365 days, as the reference counts them.
const (
	Unknown Unit = 0
	Second  Unit = 1
	Minute  Unit = 2
	Hour    Unit = 3
	Day     Unit = 4
	Month   Unit = 5
	Year    Unit = 6
	Week    Unit = 7
)

// unitNames are the units' names, by value.
var unitNames = [...]string{"unknown", "second", "minute", "hour", "day", "month", "year", "week"}

// unitSeconds are the units' lengths in seconds, by value.
var unitSeconds = [...]int64{0, 1, 60, 3600, 86400, 30 * 86400, 365 * 86400, 7 * 86400}

// unitList is what a file may write as a unit, for error messages.
const unitList = "second, minute, hour, day, week, month, year"

// Seconds is the length of the unit in seconds (a month is 30 days, a
// year 365): the reference's window for the unit. 0 for Unknown.
func (u Unit) Seconds() int64 {
	if u < 0 || int(u) >= len(unitSeconds) {
		return 0
	}
	return unitSeconds[u]
}

// String is the unit's name in a file: "second", "minute", ...;
// "unknown" for Unknown or a value that is not a unit.
func (u Unit) String() string {
	if u < 0 || int(u) >= len(unitNames) {
		return "unknown"
	}
	return unitNames[u]
}

// parseUnit reads a unit as the reference does: its name in any case
// (strings.ToUpper, as the reference compares it); Unknown if it is none.
func parseUnit(s string) Unit {
	up := strings.ToUpper(s)
	for u := Second; int(u) < len(unitNames); u++ {
		if up == strings.ToUpper(unitNames[u]) {
			return u
		}
	}
	return Unknown
}

// RateLimit is the rate_limit of one descriptor of a file. A Config's
// RateLimits are shared by every Match that finds them: never change one.
type RateLimit struct {
	// FullKey is the descriptor's path in the file, as the reference
	// names it: the domain and each level's key, or key_value, joined by
	// dots ("domain.key1_value1.subkey1").
	FullKey string
	// Name is the rate_limit's name, "" if it has none.
	Name string
	// Unit and RequestsPerUnit are the limit as the file states it, what
	// the service reports as the current limit. With Algorithm both are
	// optional (Unknown and 0 when not given); with Unlimited Unit is
	// Unknown.
	Unit            Unit
	RequestsPerUnit uint32
	// Unlimited is unlimited: true: every request is within the limit.
	Unlimited bool
	// DenyAll is a reference limit of requests_per_unit 0: every request
	// is over the limit.
	DenyAll bool
	// ShadowMode, QuotaMode and DetailedMetric are the descriptor's flags
	// shadow_mode, quota_mode and detailed_metric.
	ShadowMode, QuotaMode, DetailedMetric bool
	// Holds is our holds: true: calls under the limit may reserve,
	// commit and release.
	Holds bool
	// Replaces are the names of the limits this one replaces.
	Replaces []string
	// Algorithm is our algorithm, as written ("gcra", "library.name"),
	// and Params its parameters; "" and nil for the reference's fixed
	// window.
	Algorithm string
	Params    map[string]int64
	// Limit is the limit a request is decided by: the algorithm's with
	// Params, or limitspec.FixedWindow{Limit: RequestsPerUnit, Window:
	// the unit}; nil when Unlimited or DenyAll.
	Limit limitspec.Limit
}

// Entry is one entry of a descriptor, as Envoy sends it.
type Entry struct {
	Key, Value string
}

// Match is what Config.Match finds for a descriptor.
type Match struct {
	// Limit is the limit that applies, nil when none does: the
	// descriptor is not limited.
	Limit *RateLimit
	// Tag names the descriptor's counter as the reference names its
	// cache key, without its prefix and window: the domain, then each
	// entry's key and value, each followed by '_' ("domain_k1_v1_k2_v2_"),
	// an entry matched by a share_threshold wildcard giving the wildcard
	// (the value "files/*") instead of its value, so that every value
	// under it counts in one counter. "" when Limit is nil.
	Tag string
}

// Config is a loaded configuration: immutable, safe for concurrent use.
type Config struct {
	domains map[string]*node
	names   []string
}

// Load reads files in order, each holding one domain, and returns their
// configuration, or the first refusal, an *Error, and no configuration.
func Load(files []File, opts Options) (*Config, error) {
	c := &Config{domains: map[string]*node{}}
	for _, f := range files {
		if err := c.add(f, opts); err != nil {
			return nil, err
		}
	}
	for name := range c.domains {
		c.names = append(c.names, name)
	}
	slices.Sort(c.names)
	return c, nil
}

// LoadDir loads (as Load) every file directly in dir whose name ends in
// .yaml or .yml, in the order of their names; it skips directories and
// every other file. A directory or file it cannot read is its error as
// package os returns it (an *fs.PathError); a refused file is an *Error
// whose File is the file's path.
func LoadDir(dir string, opts Options) (*Config, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") {
			continue
		}
		path := filepath.Join(dir, name)
		if skip, err := isDir(path, e); err != nil {
			return nil, err
		} else if skip {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: path, Data: data})
	}
	return Load(files, opts)
}

// isDir reports whether the entry at path is a directory, or a symbolic
// link to one (as Kubernetes mounts a ConfigMap's ..data).
func isDir(path string, e fs.DirEntry) (bool, error) {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir(), nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// Domains lists the configuration's domains, sorted.
func (c *Config) Domains() []string {
	if c == nil {
		return nil
	}
	return slices.Clone(c.names)
}
