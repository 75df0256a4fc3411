package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/limitspec/limitspec/conformance"
)

// report is a run's results, as verify prints them; -json writes it as
// it is.
type report struct {
	Targets []string       `json:"targets"` // in the order they ran: the table's columns
	Vectors []vectorReport `json:"vectors"` // in the order they were read
	Summary summary        `json:"summary"`
}

// vectorReport is one vector and how every target fared on it.
type vectorReport struct {
	Name      string         `json:"name"`
	File      string         `json:"file"`
	Algorithm string         `json:"algorithm,omitempty"` // or
	Policy    string         `json:"policy,omitempty"`    // the policy's name
	Comment   string         `json:"-"`                   // printed by -v beside a failure
	Results   []targetResult `json:"results"`
}

// targetResult is how one target fared on one vector.
type targetResult struct {
	Target string `json:"target"`
	Status status `json:"status"`
	Steps  int    `json:"steps"` // steps the target ran
	// Failure is the first divergence, with its diff; Skipped why the
	// target could not run the vector.
	Failure string `json:"failure,omitempty"`
	Skipped string `json:"skipped,omitempty"`
}

// status is how a vector went on a target: pass, fail or skip.
type status string

const (
	statusPass status = "pass"
	statusFail status = "fail"
	statusSkip status = "skip"
)

// summary counts vector × target pairs, vectors and targets.
type summary struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	Vectors int `json:"vectors"`
	Targets int `json:"targets"`
}

// newReport gathers results by vector, in the order of vectors.
func newReport(vectors []conformance.Vector, results []conformance.VectorResult) report {
	var rep report
	byFile := map[string]int{}
	for _, v := range vectors {
		vr := vectorReport{Name: v.Name, File: v.File, Algorithm: v.Algorithm, Comment: v.Comment}
		if v.Policy != nil {
			vr.Policy = v.Policy.Name
		}
		byFile[v.File] = len(rep.Vectors)
		rep.Vectors = append(rep.Vectors, vr)
	}
	for _, r := range results {
		if !slices.Contains(rep.Targets, r.Target) {
			rep.Targets = append(rep.Targets, r.Target)
		}
		tr := targetResult{Target: r.Target, Status: statusPass, Steps: r.Steps, Failure: r.Failed, Skipped: r.Skipped}
		switch {
		case r.Skipped != "":
			tr.Status = statusSkip
			rep.Summary.Skipped++
		case r.Failed != "":
			tr.Status = statusFail
			rep.Summary.Failed++
		default:
			rep.Summary.Passed++
		}
		vr := &rep.Vectors[byFile[r.File]]
		vr.Results = append(vr.Results, tr)
	}
	rep.Summary.Vectors, rep.Summary.Targets = len(rep.Vectors), len(rep.Targets)
	return rep
}

// writeJSON writes the report as one JSON object.
func writeJSON(w io.Writer, rep report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeSummary writes the last line.
func writeSummary(w io.Writer, s summary) {
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped over %d vectors and %d targets\n",
		s.Passed, s.Failed, s.Skipped, s.Vectors, s.Targets)
}

// writeLines writes a line per vector and target (PASS, FAIL with its
// divergence and the vector's comment, or SKIP with the reason).
func writeLines(w io.Writer, rep report) {
	for _, v := range rep.Vectors {
		for _, r := range v.Results {
			switch r.Status {
			case statusSkip:
				fmt.Fprintf(w, "SKIP %s [%s] %s\n", v.Name, r.Target, r.Skipped)
			case statusPass:
				fmt.Fprintf(w, "PASS %s [%s] %d steps\n", v.Name, r.Target, r.Steps)
			default:
				writeFailure(w, v, r)
				if v.Comment != "" {
					fmt.Fprintf(w, "  vector: %s\n", v.Comment)
				}
			}
		}
	}
}

// writeFailure writes one failure: the vector, the target, the file and
// the first divergence with its diff, indented.
func writeFailure(w io.Writer, v vectorReport, r targetResult) {
	fmt.Fprintf(w, "FAIL %s [%s] %s\n  %s\n", v.Name, r.Target, v.File, strings.ReplaceAll(r.Failure, "\n", "\n  "))
}

// writeFailures writes the first max failures, and how many more there
// are.
func writeFailures(w io.Writer, rep report, max int) {
	n := 0
	for _, v := range rep.Vectors {
		for _, r := range v.Results {
			if r.Status != statusFail {
				continue
			}
			if n++; n <= max {
				writeFailure(w, v, r)
			}
		}
	}
	if n > max {
		fmt.Fprintf(w, "... %d more failures not shown (-v lists every one, -run selects vectors)\n", n-max)
	}
}
