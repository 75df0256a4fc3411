// Command adapter is fixed_window (docs/semantics.md) behind the line
// protocol of docs/protocol.md, written from those two pages alone: the
// test of `verify -exec`. -broken admits one request past the limit;
// -hang never answers a decision.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

type request struct {
	Op     string                 `json:"op"`
	Params map[string]json.Number `json:"params"`
	Key    string                 `json:"key"`
	TMs    json.Number            `json:"t_ms"`
	Cost   json.Number            `json:"cost"`
	Force  bool                   `json:"force"`
}

type state struct{ last, used int64 } // the last admission's eff, and the count of its window

type stateKey struct {
	key    string
	window int64
}

var (
	broken = flag.Bool("broken", false, "admit one request past the limit")
	hang   = flag.Bool("hang", false, "never answer a decision")
	states = map[stateKey]state{}
)

func main() {
	flag.Parse()
	in, out := bufio.NewScanner(os.Stdin), json.NewEncoder(os.Stdout) // Encode writes through: no buffer to flush
	for in.Scan() {
		var r request
		d := json.NewDecoder(strings.NewReader(in.Text()))
		d.UseNumber()
		if err := d.Decode(&r); err != nil {
			fmt.Fprintln(os.Stderr, "adapter:", err)
			os.Exit(1)
		}
		out.Encode(answer(r))
	}
}

func answer(r request) any {
	switch r.Op {
	case "hello":
		return map[string]any{"protocol": 1, "name": "testdata-fixed-window", "algorithms": []string{"fixed_window"},
			"fields": []string{"allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms", "delay_ms", "tier"}}
	case "begin":
		states = map[stateKey]state{}
		return map[string]any{}
	}
	limit, window, now, cost, bad := inputs(r)
	if bad != "" {
		return map[string]string{"error": "BADINPUT", "message": bad}
	}
	k := stateKey{r.Key, window}
	if r.Op == "reset" {
		delete(states, k)
		return map[string]any{}
	}
	if *hang {
		time.Sleep(time.Hour)
	}
	return decide(k, limit, window, now, cost, r.Force)
}

// integer is n if it is an integer in [lo, hi], else a refusal.
func integer(name string, n json.Number, lo, hi int64) (int64, string) {
	v, err := n.Int64()
	if err != nil || v < lo || v > hi {
		return 0, fmt.Sprintf("%s must be an integer in [%d, %d], got %s", name, lo, hi, n)
	}
	return v, ""
}

// inputs checks the parameters, key, time and cost, in that order.
func inputs(r request) (limit, window, now, cost int64, bad string) {
	for name := range r.Params {
		if name != "limit" && name != "window_ms" {
			return 0, 0, 0, 0, "unknown parameter " + name
		}
	}
	if limit, bad = integer("limit", r.Params["limit"], 1, 1e12); bad != "" {
		return
	}
	if window, bad = integer("window_ms", r.Params["window_ms"], 1, 1e11); bad != "" {
		return
	}
	if r.Key == "" || strings.HasPrefix(r.Key, "}") {
		return 0, 0, 0, 0, "the key is empty or begins with }"
	}
	if now, bad = integer("t_ms", r.TMs, 0, 1<<45); bad != "" || r.Op == "reset" {
		return
	}
	cost, bad = integer("cost", r.Cost, 0, 1<<53-1)
	return
}

// decide is docs/semantics.md's fixed_window, with "State and time" and
// "Force".
func decide(k stateKey, limit, window, now, cost int64, force bool) map[string]any {
	s, ok := states[k]
	if ok && s.last-now > 60000 { // a clock more than MAX_SKEW_MS ahead: no state
		ok = false
	}
	eff, used := now, int64(0)
	if ok {
		eff = max(now, s.last)
		if s.last/window == eff/window {
			used = min(s.used, 2*limit)
		}
	}
	room := limit
	if *broken {
		room++
	}
	allowed := used+cost <= room
	charge := int64(0)
	if allowed {
		charge = cost
	} else if force {
		charge = max(0, min(cost, 2*limit-used))
	}
	if charge > 0 {
		used += charge
		states[k] = state{eff, used}
	}
	end := (eff/window + 1) * window
	res := map[string]any{"allowed": allowed, "limit": limit, "remaining": max(0, limit-used),
		"retry_after_ms": -1, "reset_after_ms": 0, "delay_ms": 0, "tier": 0}
	if used > 0 {
		res["reset_after_ms"] = end - now
	}
	if !allowed && cost <= limit {
		res["retry_after_ms"] = end - now
	}
	return res
}
