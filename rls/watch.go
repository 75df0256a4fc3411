package rls

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/limitspec/limitspec/rls/config"
)

// Watch reloads the configuration of dir into s whenever its files
// change, looking every interval until ctx ends. A change is loaded once
// the files stay the same for an interval (a file caught half written is
// not loaded): a configuration that loads replaces the running one
// (SetConfig: counters keep their state); one that does not is reported
// to refused, with the file, line and reason, and the running one is
// kept. It returns when ctx ends.
func Watch(ctx context.Context, s *Service, dir string, opts config.Options, interval time.Duration, refused func(error)) {
	last, pending := fingerprint(dir), false
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := fingerprint(dir)
		if now != last {
			last, pending = now, true
			continue
		}
		if !pending {
			continue
		}
		pending = false
		cfg, err := config.LoadDir(dir, opts)
		if err != nil {
			refused(err)
			continue
		}
		s.SetConfig(cfg)
	}
}

// fingerprint sums the names and contents of dir's configuration files
// (those config.LoadDir reads), so that any change to them changes it;
// a directory that cannot be read sums to "".
func fingerprint(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return ""
		}
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(data)
		h.Write([]byte{0})
	}
	return string(h.Sum(nil))
}
