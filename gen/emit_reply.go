package gen

import (
	"fmt"
	"strings"
)

// emitReply returns kit's reply_gen.go, for the catalogue: kit.Reply, a
// decision as the scripts reply it, and kit.ReplyFields, its fields'
// names in order, both from the spec's reply, which states them once.
// The policy script combines results by these fields, by place
// (policyReply).
func emitReply(sp *Spec, o *Output) ([]byte, error) {
	if !o.runtimeToo {
		return nil, nil
	}
	var w writer
	goFileHeader(&w, sp.Source, o.kit.name)
	w.line("// Reply is a decision as the scripts reply it: the spec's reply fields,")
	w.line("// in order, durations in ms.")
	w.line("type Reply struct {")
	var names []string
	for _, f := range sp.Reply {
		typ := "int64"
		if f.Type == Bool {
			typ = "bool"
		}
		w.line("// %s: %s.", goExported(f.Name), f.Doc)
		w.line("%s %s", goExported(f.Name), typ)
		names = append(names, fmt.Sprintf("%q", f.Name))
	}
	w.line("}")
	w.line("")
	w.line("// ReplyFields names Reply's fields in the scripts' order.")
	w.line("var ReplyFields = []string{%s}", strings.Join(names, ", "))
	return formatGo(w, "kit's reply")
}
