//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/ahpclient"
	"github.com/agentrun/agentrun.nvim/ahpserver"
	"github.com/agentrun/agentrun.nvim/termhost"
	"github.com/agentrun/agentrun.nvim/termhost/ahp"
)

// runHost measures what serving a terminal to socket clients costs: the
// pty drain time of a flooding command with 8 subscribers against 1
// (alternating rounds, medians), that every subscriber ends with exactly
// the command's output, and how long attaching takes until the first
// byte of the scrollback is there.
func runHost(lines int) error {
	dir, file, err := linesFile("arb", lines)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	want := bytes.ReplaceAll(raw, []byte("\n"), []byte("\r\n")) // the pty's output
	h := termhost.NewHost(termhost.Options{})
	defer h.Close()
	socket := filepath.Join(dir, "h.sock")
	ln, err := ahpserver.Listen(socket)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := ahpserver.New(h, ahpserver.Options{})
	go srv.Serve(ctx, ln)

	fmt.Printf("\nhost: %d lines (%s) to socket subscribers; drain = input that starts `cat` to the exit, output read to the end\n", lines, sizeOf(file))
	drains := map[int][]time.Duration{}
	for round := 0; round < 3; round++ {
		for _, n := range []int{1, 8} {
			d, err := drainWith(ctx, h, socket, file, want, n)
			if err != nil {
				return fmt.Errorf("%d subscribers: %w", n, err)
			}
			drains[n] = append(drains[n], d)
		}
	}
	one, eight := median(drains[1]), median(drains[8])
	fmt.Printf("  1 subscriber:    %6.0f ms  (median of %s)\n", ms(one), list(drains[1]))
	fmt.Printf("  8 subscribers:   %6.0f ms  (median of %s); every subscriber's content exact\n", ms(eight), list(drains[8]))
	fmt.Printf("  ratio 8 / 1:     %6.2f×  (target ≤ 1.05×)\n", ratio(eight, one))

	lat, err := attachLatency(ctx, h, socket)
	if err != nil {
		return err
	}
	fmt.Printf("  attach to first byte (dial, initialize, subscribe; 64 KiB of scrollback): median %.2f ms of 20\n", ms(median(lat)))
	return nil
}

// drainWith runs cat file in a terminal that n clients subscribe to
// before it starts, and returns the drain time; it fails unless every
// client's stream (snapshot and data) ends with want.
func drainWith(ctx context.Context, h *termhost.Host, socket, file string, want []byte, n int) (time.Duration, error) {
	t, err := h.Create(ctx, termhost.Spec{Command: "read go; cat " + file, Shell: true, Claim: ahp.SessionClaim("s:/bench", "")})
	if err != nil {
		return 0, err
	}
	defer t.Release()
	// Each subscriber hashes its whole stream and keeps its tail: cheap,
	// so the bench measures the host, not a client's memory copies.
	type sub struct {
		c    *ahpclient.Client
		hash hash.Hash
		n    int
		tail []byte
		done chan struct{}
	}
	subs := make([]*sub, n)
	for i := range subs {
		c, err := ahpclient.Dial(ctx, socket, "bench-"+strconv.Itoa(i))
		if err != nil {
			return 0, err
		}
		defer c.Close()
		if _, err := c.Initialize(ctx); err != nil {
			return 0, err
		}
		snap, err := c.Subscribe(ctx, t.URI())
		if err != nil {
			return 0, err
		}
		st, err := ahpclient.TerminalState(snap)
		if err != nil {
			return 0, err
		}
		s := &sub{c: c, hash: sha256.New(), done: make(chan struct{})}
		add := func(b string) {
			s.hash.Write([]byte(b))
			s.n += len(b)
			s.tail = append(s.tail, b...)
			if len(s.tail) > 2*tailBytes {
				s.tail = append(s.tail[:0], s.tail[len(s.tail)-tailBytes:]...)
			}
		}
		add(st.Text())
		subs[i] = s
		go func() {
			defer close(s.done)
			for e := range c.Envelopes() {
				if e.ServerSeq <= snap.FromSeq {
					continue
				}
				switch a := e.Action.(type) {
				case ahp.DataAction:
					add(a.Data)
				case ahp.ExitedAction:
					return
				}
			}
		}()
	}
	start := time.Now()
	if _, err := t.Write([]byte("\r")); err != nil {
		return 0, err
	}
	if _, err := t.Wait(ctx); err != nil {
		return 0, err
	}
	d := time.Since(start)
	var wg sync.WaitGroup
	for i, s := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-s.done:
			case <-time.After(30 * time.Second):
				err = fmt.Errorf("subscriber %d: no exit within 30 s", i)
			}
		}()
	}
	wg.Wait()
	if err != nil {
		return 0, err
	}
	first := subs[0].hash.Sum(nil)
	for i, s := range subs {
		if !bytes.HasSuffix(want, s.tail[max(0, len(s.tail)-tailBytes):]) && !bytes.HasSuffix(s.tail, want[max(0, len(want)-tailBytes):]) {
			return 0, fmt.Errorf("subscriber %d: its stream does not end with the output", i)
		}
		if s.n < len(want) || s.n > len(want)+16 { // the echo of the Enter that started it
			return 0, fmt.Errorf("subscriber %d got %d bytes, want %d", i, s.n, len(want))
		}
		if !bytes.Equal(s.hash.Sum(nil), first) {
			return 0, fmt.Errorf("subscriber %d got another stream than subscriber 0", i)
		}
	}
	return d, nil
}

// tailBytes is how much of its stream each subscriber compares as is.
const tailBytes = 64 << 10

// attachLatency attaches 20 times to a terminal with 64 KiB of output.
func attachLatency(ctx context.Context, h *termhost.Host, socket string) ([]time.Duration, error) {
	t, err := h.Create(ctx, termhost.Spec{Command: "head -c 49152 /dev/zero | od -v | head -c 65536; sleep 60", Shell: true})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	deadline := time.Now().Add(10 * time.Second)
	for len(t.Output().Text) < 60000 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var out []time.Duration
	for i := 0; i < 20; i++ {
		start := time.Now()
		c, err := ahpclient.Dial(ctx, socket, "attach-"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		if _, err := c.Initialize(ctx); err != nil {
			return nil, err
		}
		snap, err := c.Subscribe(ctx, t.URI())
		if err != nil {
			return nil, err
		}
		if len(snap.State) < 60000 {
			return nil, fmt.Errorf("attach %d: a snapshot of %d bytes", i, len(snap.State))
		}
		out = append(out, time.Since(start))
		c.Close()
	}
	return out, nil
}
