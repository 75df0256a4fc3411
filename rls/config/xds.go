package config

import (
	"errors"

	rlsconf "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"
	"gopkg.in/yaml.v3"
)

// LoadProto loads configurations as Envoy Gateway delivers them over
// xDS (RateLimitConfig resources), read as Load reads a file of the same
// domain and descriptors: the same checks, the same refusals, each
// named by the resource's name (and no line: a resource has none). The
// protocol carries the reference's fields only: no algorithm, params or
// holds.
func LoadProto(confs []*rlsconf.RateLimitConfig, opts Options) (*Config, error) {
	files := make([]File, len(confs))
	for i, c := range confs {
		data, err := yaml.Marshal(fileOf(c))
		if err != nil {
			return nil, err
		}
		files[i] = File{Name: "RateLimitConfig " + c.GetName(), Data: data}
	}
	cfg, err := Load(files, opts)
	var e *Error
	if errors.As(err, &e) {
		e.Line = 0 // a line of the YAML written here, not of the resource
	}
	return cfg, err
}

// yamlFile, yamlDescriptor and yamlLimit are a file's form, as LoadProto
// writes a resource for Load to read.
type yamlFile struct {
	Domain      string           `yaml:"domain"`
	Descriptors []yamlDescriptor `yaml:"descriptors,omitempty"`
}

type yamlDescriptor struct {
	Key            string           `yaml:"key"`
	Value          string           `yaml:"value,omitempty"`
	RateLimit      *yamlLimit       `yaml:"rate_limit,omitempty"`
	Descriptors    []yamlDescriptor `yaml:"descriptors,omitempty"`
	ShadowMode     bool             `yaml:"shadow_mode,omitempty"`
	DetailedMetric bool             `yaml:"detailed_metric,omitempty"`
}

type yamlLimit struct {
	Unit            string              `yaml:"unit,omitempty"`
	RequestsPerUnit uint32              `yaml:"requests_per_unit"`
	Unlimited       bool                `yaml:"unlimited,omitempty"`
	Name            string              `yaml:"name,omitempty"`
	Replaces        []map[string]string `yaml:"replaces,omitempty"`
}

// fileOf is c as a file; a limit's UNKNOWN unit is written as no unit.
func fileOf(c *rlsconf.RateLimitConfig) yamlFile {
	return yamlFile{Domain: c.GetDomain(), Descriptors: descriptorsOf(c.GetDescriptors())}
}

func descriptorsOf(ds []*rlsconf.RateLimitDescriptor) []yamlDescriptor {
	out := make([]yamlDescriptor, len(ds))
	for i, d := range ds {
		out[i] = yamlDescriptor{Key: d.GetKey(), Value: d.GetValue(), Descriptors: descriptorsOf(d.GetDescriptors()),
			ShadowMode: d.GetShadowMode(), DetailedMetric: d.GetDetailedMetric()}
		if p := d.GetRateLimit(); p != nil {
			l := &yamlLimit{RequestsPerUnit: p.GetRequestsPerUnit(), Unlimited: p.GetUnlimited(), Name: p.GetName()}
			if p.GetUnit() != rlsconf.RateLimitUnit_UNKNOWN {
				l.Unit = p.GetUnit().String()
			}
			for _, r := range p.GetReplaces() {
				l.Replaces = append(l.Replaces, map[string]string{"name": r.GetName()})
			}
			out[i].RateLimit = l
		}
	}
	return out
}
