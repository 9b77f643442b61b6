//go:build linux

// Command bench compares agentrun's terminal path with its baselines in one
// run, on the same output: a raw pty drain and Neovim's own :terminal. It
// prints ratios, not pass/fail verdicts (see README "Performance"). It
// builds on Linux only: it reads /proc and measures bubblewrap and prlimit.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "screenwatch" { // reads a tmux pane's output (bench/screen.go)
		if err := runScreenwatch(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "subscriber" { // a client process of the host bench
		if err := runSubscriber(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	lines := flag.Int("lines", 1000000, "lines of output for the drain/display runs")
	flood := flag.Duration("flood", 3*time.Second, "how long the lag flood runs")
	only := flag.String("only", "", `run one part: "display" (a, b, c and the ratios), "scale", "outputlat", "sandbox", "host", "lag", "feel", "memory" or "remote"; "nvim" runs what depends on the Neovim (display and feel), "shared" the rest`)
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.IntVar(&memCommands, "mem-commands", 40, "memory part: how many commands, each split kept")
	flag.IntVar(&memLines, "mem-lines", 30000, "memory part: lines each command prints (over the 10000 of scrollback, every split costs the same)")
	flag.IntVar(&memTurns, "mem-turns", 500, "memory part: turns of the chat whose cost is measured")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	var err error
	switch *only {
	case "":
		err = run(*lines, *flood)
	case "display":
		err = runDisplay(*lines, *flood)
	case "scale":
		err = runScale()
	case "outputlat":
		err = printOutputLatency(strings.Repeat("0123456789", 7))
	case "sandbox":
		err = runSandbox()
	case "host":
		err = runHost(*lines)
	case "lag":
		err = runLag(*flood)
	case "remote":
		err = runRemote()
	case "feel":
		err = runFeel()
	case "memory":
		err = runMemory(memCommands, memLines, memTurns)
	case "nvim":
		err = runNvim(*lines, *flood)
	case "shared":
		err = runShared(*lines)
	default:
		err = fmt.Errorf("-only %q: want display, scale, outputlat, sandbox, host, lag, feel, memory, remote, nvim or shared", *only)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(lines int, flood time.Duration) error {
	if err := runNvim(lines, flood); err != nil {
		return err
	}
	return runShared(lines)
}

// runNvim runs the parts whose figures depend on the Neovim
// (AGENTRUN_NVIM): make bench NVIM="0.7 0.10 0.12" runs them once per
// version and runShared once.
func runNvim(lines int, flood time.Duration) error {
	fmt.Printf("Neovim: %s\n", nvimVersion())
	if err := runDisplay(lines, flood); err != nil {
		return err
	}
	if err := runFeel(); err != nil {
		return err
	}
	return runMemory(memCommands, memLines, memTurns)
}

// The memory part's sizes (flags).
var memCommands, memLines, memTurns int

// runShared runs the parts that measure the backend more than the Neovim.
func runShared(lines int) error {
	if err := runScale(); err != nil {
		return err
	}
	if err := runSandbox(); err != nil {
		return err
	}
	if err := runHost(lines); err != nil {
		return err
	}
	return runRemote()
}

// runDisplay measures (a), (b) and (c) on the same output and prints the
// ratios. The machine is shared, so what is cheap to repeat is measured in
// rounds, alternating contenders: the raw drain and the agent path as
// medians of three, the lag p99 over the samples of three floods each.
func runDisplay(lines int, flood time.Duration) error {
	dir, file, err := linesFile("agentrun-bench", lines)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	last := strconv.Itoa(lines)
	fmt.Printf("output: %d lines (cat of a %s file) on %s\n\n", lines, sizeOf(file), hostDesc())

	nat, err := nativeDisplay(file, last)
	if err != nil {
		return err
	}
	return runPlugin(pluginRun{file: file, last: last, native: nat, floodCmd: floodCommand(flood), flood: flood})
}

// floodCommand floods a terminal for flood.
func floodCommand(flood time.Duration) string {
	return "timeout " + strconv.Itoa(int(flood.Seconds())) + " yes 'flood 0123456789 abcdefghijklmnopqrstuvwxyz'"
}

// rounds is how many times the repeatable measurements run; the lag
// floods run lagRounds times (their p99 is the noisiest figure).
const (
	rounds    = 3
	lagRounds = 5
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func showComplete(r displayResult) string {
	if r.Complete == 0 {
		return "   never    "
	}
	return fmt.Sprintf("%8.0f ms  ", ms(r.Complete))
}

// linesFile writes n numbered lines to lines.txt in a new temporary
// directory (short-named: a socket may go there too) and returns both.
func linesFile(prefix string, n int) (dir, file string, err error) {
	if dir, err = os.MkdirTemp("", prefix); err != nil {
		return "", "", err
	}
	file = filepath.Join(dir, "lines.txt")
	if err = writeLines(file, n); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return dir, file, nil
}

func writeLines(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<20)
	for i := 1; i <= n; i++ {
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, '\n')
		if len(buf) > 1<<20-32 {
			if _, err := f.Write(buf); err != nil {
				f.Close()
				return err
			}
			buf = buf[:0]
		}
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func sizeOf(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MB", float64(st.Size())/1e6)
}

func hostDesc() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	n := 0
	if err == nil {
		for i := 0; i+9 <= len(b); i++ {
			if string(b[i:i+9]) == "processor" {
				n++
			}
		}
	}
	return fmt.Sprintf("%d cores", n)
}
