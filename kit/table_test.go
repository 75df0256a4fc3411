package kit

import "testing"

// TestNameState: a Call names its state as StateName does, a limit's
// call by its key alone; a policy's limit's name is built in the call's
// buffer, without allocating once the buffer has grown, and a name a
// store kept (a copy) is not changed by the call's next name.
func TestNameState(t *testing.T) {
	var c Call
	for _, k := range []struct{ key, infix string }{
		{"alice", ""}, {"alice", ":per_ip"}, {"10.0.0.1", ":second"}, {"a}b", ":l"}, {"bob", ""},
	} {
		c.NameState(k.key, k.infix)
		if want := StateName(k.key, k.infix); c.Key != want {
			t.Errorf("NameState(%q, %q) = %q, want %q", k.key, k.infix, c.Key, want)
		}
	}
	c.NameState("alice", ":per_ip")
	kept := string([]byte(c.Key)) // as a store keeps a name: a copy
	if n := testing.AllocsPerRun(100, func() { c.NameState("carol", ":per_ip") }); n != 0 {
		t.Errorf("NameState allocates %v times a call once its buffer has grown; want 0", n)
	}
	if kept != "}alice}:per_ip" || c.Key != "}carol}:per_ip" {
		t.Errorf("a kept name %q and the call's %q; want }alice}:per_ip and }carol}:per_ip", kept, c.Key)
	}
}
