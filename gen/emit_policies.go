package gen

import (
	"fmt"
	"strings"
)

// emitPolicies returns the ready-made policies of a spec: one Go function
// per policy of its policies, whose per-call parameters ("call") are the
// function's arguments; nil for a spec without policies.
func emitPolicies(sp *Spec, o *Output) ([]byte, error) {
	if len(sp.Policies) == 0 {
		return nil, nil
	}
	var w writer
	goFileHeader(&w, sp.Source, o.limits.name)
	q := o.qualifier(o.limits, o.contract)
	goImports(&w, []string{"time"}, pick(q != "", o.contract.path, ""))
	w.line("")
	w.line("var _ time.Duration // not every spec's policies have a duration")
	for _, p := range sp.Policies {
		policyFunc(&w, sp, o, p)
	}
	return formatGo(w, "the ready-made policies")
}

// policyFunc emits the function that makes one policy.
func policyFunc(w *writer, sp *Spec, o *Output, p *Policy) {
	q := o.qualifier(o.limits, o.contract)
	var args, argDocs []string
	for _, l := range p.Limits {
		for _, prm := range l.PerCall() {
			t := "int64"
			if _, ok := durationName(prm); ok {
				t = "time.Duration"
			}
			args = append(args, perCallArg(l, prm)+" "+t)
			argDocs = append(argDocs, fmt.Sprintf("%s is the %s of its limit %s", perCallArg(l, prm), limitField(prm), l.Name))
		}
	}
	w.line("")
	w.line("// %s is the policy %s of %s:", goTypeName(p.Name)+"Policy", p.Name, sp.Source)
	w.line("//")
	for _, line := range strings.Split(p.Doc, "\n") {
		w.line("// %s", line)
	}
	if len(argDocs) > 0 {
		w.line("//")
		w.line("// %s.", strings.Join(argDocs, "; "))
	}
	w.line("func %sPolicy(%s) (*%sPolicy, error) {", goTypeName(p.Name), strings.Join(args, ", "), q)
	w.line("return %sNewPolicy(%q,", q, p.Name)
	for _, l := range p.Limits {
		who := fmt.Sprintf("Identity: %q", l.Identity)
		if l.Constant != "" {
			who = fmt.Sprintf("Constant: %q", l.Constant)
		}
		w.line("%sPolicyLimit{Name: %q, Limit: %s, %s},", q, l.Name, limitLiteral(o, l), who)
	}
	w.line(")")
	w.line("}")
}

// perCallArg is the argument of a per-call parameter of a limit, named
// after the limit and its field: daily's limit is dailyLimit, burst's
// refill_tokens burstRefillTokens, a window's window_ms windowWindow.
func perCallArg(l *Limit, prm *Param) string {
	field := prm.Name
	if base, ok := durationBase(prm.Name); ok {
		field = base
	}
	return goName(l.Name + "_" + field)
}

// limitLiteral is the typed limit of a policy's limit.
func limitLiteral(o *Output, l *Limit) string {
	typ := goType(l.Alg)
	if l.Alg.Library == CatalogueLibrary {
		typ = o.qualifier(o.limits, o.contract) + typ
	}
	var fields []string
	for _, prm := range l.Alg.Params {
		v, fixed := l.Fixed[prm.Name]
		_, dur := durationName(prm)
		switch {
		case !fixed:
			fields = append(fields, limitField(prm)+": "+perCallArg(l, prm))
		case v == 0 && prm.Default != nil:
		case dur:
			fields = append(fields, limitField(prm)+": "+durationLiteral(v))
		default:
			fields = append(fields, fmt.Sprintf("%s: %d", limitField(prm), v))
		}
	}
	return typ + "{" + strings.Join(fields, ", ") + "}"
}

// durationLiteral writes ms as Go: 2 * time.Minute, 1500 * time.Millisecond.
func durationLiteral(ms int64) string {
	for _, u := range []struct {
		ms   int64
		name string
	}{{3600000, "Hour"}, {60000, "Minute"}, {1000, "Second"}} {
		if ms%u.ms == 0 {
			if ms == u.ms {
				return "time." + u.name
			}
			return fmt.Sprintf("%d * time.%s", ms/u.ms, u.name)
		}
	}
	return fmt.Sprintf("%d * time.Millisecond", ms)
}
