package lua

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestSHA1 checks that every embedded SHA1 is that of its source, as
// EVALSHA needs, and that the .lua file on disk is what is embedded.
func TestSHA1(t *testing.T) {
	if len(Scripts) == 0 {
		t.Fatal("no scripts generated")
	}
	for _, s := range Scripts {
		sum := sha1.Sum([]byte(s.Source))
		if got := hex.EncodeToString(sum[:]); got != s.SHA1 {
			t.Errorf("%s: SHA1 %s, source hashes to %s", s.Name, s.SHA1, got)
		}
		disk, err := os.ReadFile(s.Name + ".lua")
		if err != nil || string(disk) != s.Source {
			t.Errorf("%s: %s.lua differs from the embedded source (%v)", s.Name, s.Name, err)
		}
	}
}

// TestManifestMatchesScripts checks that manifest.json describes every
// embedded script with the same SHA1, keys and ARGV.
func TestManifestMatchesScripts(t *testing.T) {
	b, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Scripts []struct {
			Name string
			View string
			SHA1 string
			Keys []struct{ Template string }
			Argv []struct{ Name string }
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Scripts) != len(Scripts) {
		t.Fatalf("manifest lists %d scripts, %d embedded", len(m.Scripts), len(Scripts))
	}
	for i, ms := range m.Scripts {
		s := Scripts[i]
		// ARGV: now_ms and cost, the strings, the parameters; a view takes
		// now_ms and the parameters.
		inputs := 2 + len(s.Strings)
		if s.View != "" {
			inputs = 1
		}
		if ms.Name != s.Name || ms.View != s.View || ms.SHA1 != s.SHA1 || len(ms.Keys) != len(s.Keys) || len(ms.Argv) != inputs+len(s.Params) {
			t.Errorf("manifest entry %d (%s) does not match script %s", i, ms.Name, s.Name)
			continue
		}
		for j, k := range ms.Keys {
			if want := "{<key>}" + s.Keys[j]; k.Template != want {
				t.Errorf("%s key %d: template %q, want %q", s.Name, j, k.Template, want)
			}
		}
		for j, p := range s.Params {
			if ms.Argv[inputs+j].Name != p {
				t.Errorf("%s ARGV[%d] is %q in the manifest, %q embedded", s.Name, inputs+1+j, ms.Argv[inputs+j].Name, p)
			}
		}
	}
}

func TestKeyNames(t *testing.T) {
	s := Script{Keys: []string{":a:<w>", ":a:<w>:<x>:b"}, Defaults: map[string]string{"x": "0"}}
	if got := strings.Join(s.KeyNames("u1", map[string]string{"w": "60000"}), " "); got != "{u1}:a:60000 {u1}:a:60000:0:b" {
		t.Errorf("KeyNames = %q", got)
	}
	if _, ok := Lookup("gcra"); !ok {
		t.Error("Lookup(gcra) found nothing")
	}
	if s, ok := LookupView("meta_window", "entries"); !ok || s.Name != "meta_window_entries" {
		t.Errorf("LookupView(meta_window, entries) = %q, %v", s.Name, ok)
	}
	if s, ok := Lookup("meta_window"); !ok || s.View != "" {
		t.Errorf("Lookup(meta_window) = %q view %q, %v: want the decision script", s.Name, s.View, ok)
	}
}
