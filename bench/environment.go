package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Environment is where and with what a run measured.
type Environment struct {
	Date     time.Time
	CPU      string
	Cores    int
	Platform string // GOOS/GOARCH
	Go       string
	Redis    string // redis-server's version
	Peers    []Module
	GoRedis  Module // the client of every Redis figure
	// Command is the command that measured, as it reproduces the run.
	Command string
}

// Module is a dependency and its version.
type Module struct{ Path, Version string }

// peerPaths are the compared modules, in the order they are listed.
var peerPaths = []string{
	"golang.org/x/time",
	"github.com/sethvargo/go-limiter",
	"github.com/throttled/throttled/v2",
	"github.com/ulule/limiter/v3",
	"github.com/go-redis/redis_rate/v10",
}

// environment reads the machine, the toolchain and the modules built in;
// redisVersion is the server's (INFO server).
func environment(redisVersion, command string) Environment {
	e := Environment{Date: time.Now().UTC(), CPU: cpuModel(), Cores: runtime.NumCPU(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version(), Redis: redisVersion, Command: command}
	deps := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			deps[d.Path] = d.Version
		}
	}
	for _, p := range peerPaths {
		e.Peers = append(e.Peers, Module{p, orUnknown(deps[p])})
	}
	e.GoRedis = Module{"github.com/redis/go-redis/v9", orUnknown(deps["github.com/redis/go-redis/v9"])}
	return e
}

func orUnknown(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}

// cpuModel is the first "model name" of /proc/cpuinfo, or GOARCH where
// there is none.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return runtime.GOARCH
}

// Markdown is the header of the report: when, on what, with which
// versions.
func (e Environment) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s (%d cores), %s, %s, redis-server %s, with `%s`.\n",
		e.Date.Format("2006-01-02"), e.CPU, e.Cores, e.Platform, e.Go, e.Redis, e.Command)
	b.WriteString("Peers: ")
	for i, m := range e.Peers {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", m.Path, m.Version)
	}
	fmt.Fprintf(&b, "; every Redis client is %s %s.\n\n", e.GoRedis.Path, e.GoRedis.Version)
	return b.String()
}
