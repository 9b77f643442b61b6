//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/ahp/server"
	"github.com/agentrun/agentrun.nvim/termhost"
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
	ln, err := server.Listen(socket)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := server.New(h, server.Options{})
	go srv.Serve(ctx, ln)

	fmt.Printf("\nhost: %d lines (%s) to socket subscribers; drain = input that starts `cat` to the exit, output read to the end\n", lines, sizeOf(file))
	// The subscribers share the 2 cores with the host's reader: at normal
	// priority their reading and decoding takes CPU from it; at nice 19
	// the kernel gives the host the CPU first, which leaves what the
	// host's own fan-out costs its reader.
	type setup struct {
		n    int
		nice bool
	}
	setups := []setup{{1, false}, {8, false}, {1, true}, {8, true}}
	drains, cpus := map[setup][]time.Duration{}, map[setup][]time.Duration{}
	for round := 0; round < 3; round++ {
		for _, su := range setups {
			d, cpu, err := drainWith(ctx, h, socket, file, want, su.n, su.nice)
			if err != nil {
				return fmt.Errorf("%d subscribers: %w", su.n, err)
			}
			drains[su] = append(drains[su], d)
			cpus[su] = append(cpus[su], cpu)
		}
	}
	for _, nice := range []bool{false, true} {
		one, eight := median(drains[setup{1, nice}]), median(drains[setup{8, nice}])
		how := "subscriber processes at normal priority (they take CPU from the reader):"
		if nice {
			how = "subscriber processes at nice 19 (the kernel favours the host over them):"
		}
		fmt.Printf("  %s\n", how)
		fmt.Printf("    1 subscriber:    %6.0f ms  (median of %s)\n", ms(one), list(drains[setup{1, nice}]))
		fmt.Printf("    8 subscribers:   %6.0f ms  (median of %s); every subscriber's content exact\n", ms(eight), list(drains[setup{8, nice}]))
		fmt.Printf("    ratio 8 / 1:     %6.2f×  (target ≤ 1.05×)\n", ratio(eight, one))
	}
	// What the fan-out costs the host, whatever the machine's load: the
	// CPU time of the host's process (the subscribers are others) from
	// the start until every subscriber has read the exit.
	var c1, c8 []time.Duration
	for _, nice := range []bool{false, true} {
		c1, c8 = append(c1, cpus[setup{1, nice}]...), append(c8, cpus[setup{8, nice}]...)
	}
	fmt.Printf("  the host's CPU time per drain: 1 subscriber %.0f ms, 8 subscribers %.0f ms (medians of %d): %.2f× (the pty's reading, rendering and encoding are the same; the rest is 8 socket writes per batch)\n",
		ms(median(c1)), ms(median(c8)), len(c1), ratio(median(c8), median(c1)))

	lat, err := attachLatency(ctx, h, socket)
	if err != nil {
		return err
	}
	fmt.Printf("  attach to first byte (dial, initialize, subscribe; 64 KiB of scrollback): median %.2f ms of 20\n", ms(median(lat)))
	return nil
}

// drainWith runs cat file in a terminal that n clients subscribe to
// before it starts, and returns the drain time; it fails unless every
// client's stream (snapshot and data) ends with want. Each client is a
// process of its own (this program, run as "subscriber"), as real
// clients are, so that their reading and decoding is not the host's
// process's work; they still share the machine's cores with it.
func drainWith(ctx context.Context, h *termhost.Host, socket, file string, want []byte, n int, nice bool) (drain, cpu time.Duration, err error) {
	t, err := h.Create(ctx, termhost.Spec{Command: "read go; cat " + file, Shell: true, Claim: ahp.SessionClaim("s:/bench", "")})
	if err != nil {
		return 0, 0, err
	}
	defer t.Release()
	self, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	type sub struct {
		cmd *exec.Cmd
		out *bufio.Reader
	}
	subs := make([]sub, n)
	for i := range subs {
		argv := []string{self, "subscriber", socket, t.URI(), file, strconv.Itoa(i)}
		if nice {
			argv = append([]string{"nice", "-n", "19"}, argv...)
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return 0, 0, err
		}
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		defer cmd.Wait()
		defer cmd.Process.Kill()
		subs[i] = sub{cmd: cmd, out: bufio.NewReader(out)}
	}
	for i, s := range subs {
		if l, err := s.out.ReadString('\n'); err != nil || l != "subscribed\n" {
			return 0, 0, fmt.Errorf("subscriber %d: %q, %v", i, l, err)
		}
	}
	cpu0 := processCPU()
	start := time.Now()
	if _, err := t.Write([]byte("\r")); err != nil {
		return 0, 0, err
	}
	if _, err := t.Wait(ctx); err != nil {
		return 0, 0, err
	}
	d := time.Since(start)
	var first string
	for i, s := range subs {
		res := make(chan string, 1)
		go func() {
			l, _ := s.out.ReadString('\n')
			res <- l
		}()
		var l string
		select {
		case l = <-res:
		case <-time.After(30 * time.Second):
			return 0, 0, fmt.Errorf("subscriber %d: no exit within 30 s", i)
		}
		f := strings.Fields(l)
		if len(f) != 3 || f[2] != "exact" {
			return 0, 0, fmt.Errorf("subscriber %d: %q", i, l)
		}
		if got, _ := strconv.Atoi(f[0]); got < len(want) || got > len(want)+16 { // the echo of the Enter that started it
			return 0, 0, fmt.Errorf("subscriber %d got %d bytes, want %d", i, got, len(want))
		}
		if i == 0 {
			first = f[1]
		} else if f[1] != first {
			return 0, 0, fmt.Errorf("subscriber %d got another stream than subscriber 0", i)
		}
	}
	return d, processCPU() - cpu0, nil
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runSubscriber is one subscriber process of drainWith: it subscribes to
// the terminal, says "subscribed", reads until the exit, hashes its whole
// stream and compares its tail, and says "<bytes> <sha256> exact".
func runSubscriber(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("subscriber: want SOCKET URI FILE N, got %q", args)
	}
	socket, uri, file, name := args[0], args[1], args[2], args[3]
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	want := bytes.ReplaceAll(raw, []byte("\n"), []byte("\r\n"))
	ctx := context.Background()
	c, err := client.Dial(ctx, socket, "bench-"+name)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return err
	}
	snap, err := c.Subscribe(ctx, uri)
	if err != nil {
		return err
	}
	st, err := client.TerminalState(snap)
	if err != nil {
		return err
	}
	// Hash the whole stream and keep its tail: cheap, so the bench
	// measures the host, not a client's memory copies.
	sum, n := sha256.New(), 0
	var tail []byte
	add := func(b string) {
		sum.Write([]byte(b))
		n += len(b)
		tail = append(tail, b...)
		if len(tail) > 2*tailBytes {
			tail = append(tail[:0], tail[len(tail)-tailBytes:]...)
		}
	}
	add(st.Text())
	fmt.Println("subscribed")
	for e := range c.Envelopes() {
		if e.ServerSeq <= snap.FromSeq {
			continue
		}
		switch a := e.Action.(type) {
		case ahp.DataAction:
			add(a.Data)
		case ahp.ExitedAction:
			exact := bytes.HasSuffix(want, tail[max(0, len(tail)-tailBytes):]) || bytes.HasSuffix(tail, want[max(0, len(want)-tailBytes):])
			verdict := "exact"
			if !exact {
				verdict = "tail-differs"
			}
			fmt.Printf("%d %x %s\n", n, sum.Sum(nil), verdict)
			return nil
		}
	}
	return fmt.Errorf("subscriber %s: the stream ended before the exit", name)
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
		c, err := client.Dial(ctx, socket, "attach-"+strconv.Itoa(i))
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
