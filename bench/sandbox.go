//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/sandbox"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// runSandbox measures what confining a command costs where it shows: the
// time from terminal/create to the command's first byte, unconfined
// against the "project" sandbox (bubblewrap) and against limits (prlimit
// and the tree watcher), alternating, 30 starts each.
func runSandbox() error {
	dir, err := os.MkdirTemp("", "agentrun-bench-sandbox")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, _ := sandbox.Builtin("project")
	p.Writable = []string{dir}
	wrap, err := p.Prefix(dir)
	if err != nil {
		return fmt.Errorf("the sandbox cannot run here: %w", err)
	}
	limits := termhost.Limits{Memory: 1 << 30, Processes: 256, CPUTime: time.Minute, OpenFiles: 1024, FileSize: 1 << 30}
	h := termhost.NewHost(termhost.Options{})
	defer h.Close()
	kinds := []struct {
		name string
		spec termhost.Spec
	}{
		{"unconfined", termhost.Spec{}},
		{"sandbox \"project\"", termhost.Spec{Wrap: wrap}},
		{"limits (all five)", termhost.Spec{Limits: limits}},
		{"sandbox + limits", termhost.Spec{Wrap: wrap, Limits: limits}},
	}
	samples := make([][]time.Duration, len(kinds))
	for round := 0; round < 30; round++ {
		for i, k := range kinds {
			spec := k.spec
			spec.Command, spec.Args, spec.Dir = "echo", []string{"x"}, dir
			d, err := firstByte(h, spec)
			if err != nil {
				return fmt.Errorf("%s: %w", k.name, err)
			}
			samples[i] = append(samples[i], d)
		}
	}
	base := median(samples[0])
	fmt.Printf("\nstart to first byte (echo x; median of 30, alternating):\n")
	for i, k := range kinds {
		fmt.Printf("  %-20s %6.2f ms  (%.2f× unconfined)\n", k.name, ms(median(samples[i])), ratio(median(samples[i]), base))
	}
	return nil
}

// firstByte creates spec's terminal and returns how long its first
// output took to reach the display's log.
func firstByte(h *termhost.Host, spec termhost.Spec) (time.Duration, error) {
	start := time.Now()
	t, err := h.Create(context.Background(), spec)
	if err != nil {
		return 0, err
	}
	defer t.Release()
	log := t.Display()
	deadline := time.After(10 * time.Second)
	for log.Total() == 0 {
		select {
		case <-log.Notify():
		case <-deadline:
			return 0, fmt.Errorf("no output in 10s")
		}
	}
	return time.Since(start), nil
}
