package lua

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/limitspec/limitspec/internal/redistest"
)

// TestReadmeExamples runs every redis-cli example of the README and of
// docs/*.md (docs/scripts.md holds most), block by block on an emptied
// server, from the repository's root as a newcomer would, and compares
// each command's output with the "# ..." line after it: the figures the
// README and the docs show are the ones the scripts give.
func TestReadmeExamples(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatal("redis-cli not found on PATH: install it with redis-server (apt-get install redis-server)")
	}
	addr := strings.TrimPrefix(redistest.Start(t), "redis://")
	host, port, _ := strings.Cut(addr, ":")
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks, files []string
	for _, f := range append([]string{"../README.md"}, docs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range shellBlocks(string(b)) {
			blocks, files = append(blocks, block), append(files, strings.TrimPrefix(f, "../"))
		}
	}
	checked, checkedReadme := 0, 0
	for n, block := range blocks {
		if !strings.Contains(block, "redis-cli ") {
			continue
		}
		if out, err := exec.Command(cli, "-h", host, "-p", port, "FLUSHALL").CombinedOutput(); err != nil {
			t.Fatalf("FLUSHALL: %v: %s", err, out)
		}
		script, wants := markCommands(block, cli+" -h "+host+" -p "+port+" ")
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s, block %q: %v: %s", files[n], block, err, out)
		}
		outputs := strings.Split(string(out), "@@@\n")[1:]
		for i, want := range wants {
			if want == "" {
				continue
			}
			checked++
			if files[n] == "README.md" {
				checkedReadme++
			}
			if i >= len(outputs) || !outputMatches(outputs[i], want) {
				t.Errorf("%s block:\n%s\ncommand %d printed %q, the file says %q", files[n], block, i+1, at(outputs, i), want)
			}
		}
	}
	if checked < 5 || checkedReadme < 1 {
		t.Errorf("checked %d outputs of examples, %d of them the README's; want at least 5, and 1", checked, checkedReadme)
	}
}

// shellBlocks returns the contents of a Markdown file's ```sh blocks.
func shellBlocks(md string) []string {
	var out []string
	for _, part := range strings.Split(md, "```sh\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		out = append(out, block)
	}
	return out
}

// markCommands turns a block into a bash script that prints a marker
// before each redis-cli command, which runs as cli, and returns the
// output the README gives after each command ("" for none).
func markCommands(block, cli string) (script string, wants []string) {
	var b strings.Builder
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.HasPrefix(line, "redis-cli "):
			b.WriteString("echo @@@\n" + cli + strings.TrimPrefix(line, "redis-cli ") + "\n")
			wants = append(wants, "")
		case strings.HasPrefix(line, "# ") && len(wants) > 0:
			wants[len(wants)-1] = strings.TrimPrefix(line, "# ")
		default:
			b.WriteString(line + "\n")
		}
	}
	return b.String(), wants
}

// readmeLabel matches what redis-cli prints only on a terminal, which the
// README shows: "1)" and "(integer)".
var readmeLabel = regexp.MustCompile(`^(\d+\)|\(integer\))$`)

// outputMatches compares redis-cli's raw output with the README's line,
// value by value; a README line ending in "..." gives the first values.
func outputMatches(got, want string) bool {
	var w []string
	for _, f := range strings.Fields(want) {
		if !readmeLabel.MatchString(f) {
			w = append(w, strings.Trim(f, `"`))
		}
	}
	g := strings.Fields(got)
	if n := len(w); n > 0 && w[n-1] == "..." {
		w = w[:n-1]
		if len(g) > len(w) {
			g = g[:len(w)]
		}
	}
	return strings.Join(g, " ") == strings.Join(w, " ")
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(nothing)"
}
