// Command pictures draws how each algorithm of the catalogue decides one
// shared trace of requests, for the README's "Choosing an algorithm":
// docs/pictures/<algorithm>.svg, one per algorithm, on the same axes.
//
//	cd cmd/pictures && go run .          (writes docs/pictures/*.svg; make pictures)
//	cd cmd/pictures && go run . -check   (writes nothing; exit 1 if a picture is stale)
//
// The trace (trace.go) is 60 s of one client's requests: a steady stream
// above the nominal rate, a burst, an idle gap, and a burst across a
// fixed window's edge, then a slow stream. Every rate limit admits 10
// per 10 s; the limit of slots (concurrency) admits 10 in flight, in a
// holding policy where each request reserves a slot and an admitted one
// commits it 3 s later. Each is decided by package goimpl, which decides
// exactly as the Lua scripts do, at each request's own time. Each picture
// shows every request: an admitted one at the remaining it left, a
// denied one on the row below; and for the shaper (leaky_bucket), each
// admission's delay.
//
// One picture is of another kind (gateway.go): docs/pictures/llm_gateway.svg,
// an LLM gateway's budget of tokens per API key over a minute, each call
// reserving its max_tokens and committing the tokens it used.
//
// The pictures are drawn by gonum.org/v1/plot, and are byte for byte the
// same on every run. The command is a module of its own (its go.mod
// replaces limitspec with the repository's tree), so that limitspec's
// go.mod does not require the plotting library.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	out := flag.String("out", filepath.Join("..", "..", "docs", "pictures"), "the directory of the pictures")
	check := flag.Bool("check", false, "write nothing; exit 1 if a picture differs from what the command draws")
	flag.Parse()
	pics, err := render(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "pictures:", err)
		os.Exit(1)
	}
	if *check {
		stale, err := staleFiles(*out, pics)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pictures:", err)
			os.Exit(1)
		}
		for _, f := range stale {
			fmt.Println("stale:", f)
		}
		if len(stale) > 0 {
			fmt.Fprintln(os.Stderr, "pictures: stale pictures; run make pictures")
			os.Exit(1)
		}
		return
	}
	if err := write(*out, pics); err != nil {
		fmt.Fprintln(os.Stderr, "pictures:", err)
		os.Exit(1)
	}
}

// A picture file: its name in the directory and its bytes.
type file struct {
	name string
	data []byte
}

// others are the pictures of another kind than a limit's decisions of
// the trace, by name, each with what draws it.
var others = []struct {
	name string
	draw func(context.Context) ([]byte, error)
}{
	{"llm_gateway", gatewayPicture},
}

// render draws every limit's picture, in the order of limits, then the
// others.
func render(ctx context.Context) ([]file, error) {
	var out []file
	for _, limit := range limits {
		ds, err := decide(ctx, limit)
		if err != nil {
			return nil, err
		}
		data, err := picture(limit, ds)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", limit.Algorithm(), err)
		}
		out = append(out, file{limit.Algorithm().Name + ".svg", data})
	}
	for _, o := range others {
		data, err := o.draw(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.name, err)
		}
		out = append(out, file{o.name + ".svg", data})
	}
	return out, nil
}

// write writes pics into dir, creating it if need be.
func write(dir string, pics []file) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range pics {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// staleFiles lists the paths under dir of the pictures missing there or
// differing from pics, and of the SVG files there that pics lacks.
func staleFiles(dir string, pics []file) ([]string, error) {
	var stale []string
	want := map[string]bool{}
	for _, f := range pics {
		want[f.name] = true
		path := filepath.Join(dir, f.name)
		got, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if !bytes.Equal(got, f.data) {
			stale = append(stale, path)
		}
	}
	svgs, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	if err != nil {
		return nil, err
	}
	for _, path := range svgs {
		if !want[filepath.Base(path)] {
			stale = append(stale, path)
		}
	}
	return stale, nil
}
