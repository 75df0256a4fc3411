// The sections of an algorithm of the spec that declare its arguments:
// the parameters and the string inputs.

package gen

import "strings"

// params reads an algorithm's parameters, each an integer domain with an
// optional default; at is the position of an item of its lists.
func (l *loader) params(a *Algorithm, yps []yamlParam, at func(string, int) Pos) {
	if len(yps) > MaxParams {
		l.errf(a.Pos, "%s: %d parameters; an algorithm takes at most %d", a.Name, len(yps), MaxParams)
	}
	for j, yp := range yps {
		pos := at("params", j)
		p := &Param{Name: yp.Name, Min: yp.Min, Max: yp.Max, Default: yp.Default, Doc: strings.TrimSpace(yp.Doc), Index: j}
		l.checkParam(a, p, pos)
		for _, q := range a.Params {
			if q.Name == p.Name {
				l.errf(pos, "%s: parameter %s declared twice", a.Name, p.Name)
			}
		}
		a.Params = append(a.Params, p)
	}
}

// checkParam refuses a parameter's name, domain or default.
func (l *loader) checkParam(a *Algorithm, p *Param, pos Pos) {
	switch {
	case !nameRE.MatchString(p.Name) || keywords[p.Name]:
		l.errf(pos, "%s: parameter %q: names are lower_case and not a keyword", a.Name, p.Name)
	case p.Min > p.Max || p.Min < -MaxSafe || p.Max > MaxSafe:
		l.errf(pos, "%s: parameter %s: domain [%d, %d] must be non-empty and within ±(2^53-1)", a.Name, p.Name, p.Min, p.Max)
	case p.Default != nil && (*p.Default < p.Min || *p.Default > p.Max):
		l.errf(pos, "%s: parameter %s: default %d is outside [%d, %d]", a.Name, p.Name, *p.Default, p.Min, p.Max)
	case p.Default != nil && *p.Default != 0 && p.Min <= 0:
		// A typed limit's zero field leaves an optional parameter out:
		// 0 must not also be one of its values.
		l.errf(pos, "%s: parameter %s: an optional parameter whose domain holds 0 has the default 0, not %d (a Go limit's zero field leaves it out)", a.Name, p.Name, *p.Default)
	case isDurationName(p.Name) && (p.Min < 0 || p.Max > maxDurationMs):
		l.errf(pos, "%s: parameter %s: a duration (a name ending in _ms) has a domain within [0, %d] ms, what a time.Duration holds", a.Name, p.Name, maxDurationMs)
	}
}

// strInputs reads an algorithm's per-call string inputs.
func (l *loader) strInputs(a *Algorithm, yis []yamlInput, at func(string, int) Pos) {
	for j, yi := range yis {
		pos := at("inputs", j)
		in := &StrInput{Name: yi.Name, Doc: strings.TrimSpace(yi.Doc), MaxLen: yi.MaxLen, Index: j}
		switch {
		case !nameRE.MatchString(in.Name) || keywords[in.Name]:
			l.errf(pos, "%s: input %q: names are lower_case and not a keyword", a.Name, in.Name)
		case yi.Type != "string":
			l.errf(pos, "%s: input %s: type must be string (now_ms and cost are the integer inputs)", a.Name, in.Name)
		case in.MaxLen < 1 || in.MaxLen > 65536:
			l.errf(pos, "%s: input %s: max_len must be in [1, 65536]", a.Name, in.Name)
		}
		a.Strings = append(a.Strings, in)
	}
}
