//go:build linux

package main

import (
	"fmt"
	"time"

	"github.com/neovim/go-client/nvim"
)

// displayResult is when a terminal buffer first showed the last line.
type displayResult struct {
	Complete  time.Duration // 0 when the last line never appeared
	FromStart time.Duration // agentrun: Complete counted from the split's opening

	NvimCPU, BackendCPU time.Duration // agentrun: CPU time used from the prompt to the reply
	Finished            time.Duration // when the terminal reported its exit (native only)
	LastSeen            string        // the last numbered line the buffer shows
}

// nativeDisplay runs `cat file` in Neovim's own :terminal and waits until the
// last line shows or the process has exited and the buffer went quiet.
func nativeDisplay(file, last string) (displayResult, error) {
	v, err := startNvim("")
	if err != nil {
		return displayResult{}, err
	}
	defer v.Close()
	var buf int
	if err := luaValue(v, `require("probe").native_start({"cat", ...}, select(2, ...))`, &buf, file, last); err != nil {
		return displayResult{}, fmt.Errorf("native :terminal: %w", err)
	}
	// Done when found, or 3 s after exit: what Neovim 0.7 has not drawn by
	// then it never will (it drops the undrawn tail at exit).
	if err := waitFoundOrQuiet(v, 60*time.Second); err != nil {
		return displayResult{}, err
	}
	return readDisplay(v, buf)
}

// waitFoundOrQuiet waits for probe.found, or for 3 s past probe.exited.
func waitFoundOrQuiet(v *nvim.Nvim, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var exitedAt time.Time
	for time.Now().Before(deadline) {
		var st struct {
			Found  bool `msgpack:"found"`
			Exited bool `msgpack:"exited"`
		}
		if err := luaValue(v, `{found = require("probe").found ~= nil, exited = require("probe").exited ~= nil}`, &st); err != nil {
			return err
		}
		if st.Found {
			return nil
		}
		if st.Exited && exitedAt.IsZero() {
			exitedAt = time.Now()
		}
		if !exitedAt.IsZero() && time.Since(exitedAt) > 3*time.Second {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("timed out after %s waiting for the terminal", timeout)
}

func readDisplay(v *nvim.Nvim, buf int) (displayResult, error) {
	var r displayResult
	var found *float64
	if err := luaValue(v, `require("probe").found`, &found); err != nil {
		return r, err
	}
	if found != nil {
		r.Complete = time.Duration(*found * float64(time.Millisecond))
	}
	var exited *float64
	if err := luaValue(v, `require("probe").exited`, &exited); err != nil {
		return r, err
	}
	if exited != nil {
		r.Finished = time.Duration(*exited * float64(time.Millisecond))
	}
	if err := luaValue(v, `require("probe").last_number(...)`, &r.LastSeen, buf); err != nil {
		return r, err
	}
	return r, nil
}

// nativeLag measures the event-loop lag samples while Neovim's own
// :terminal shows a flood.
func nativeLag(floodCmd string, floodFor time.Duration) ([]float64, error) {
	v, err := startNvim("")
	if err != nil {
		return nil, err
	}
	defer v.Close()
	if err := v.ExecLua(`require("probe").lag_start(); require("probe").native_start({"sh", "-c", ...})`, nil, floodCmd); err != nil {
		return nil, err
	}
	time.Sleep(floodFor)
	var lags []float64
	if err := luaValue(v, `require("probe").lag_stop()`, &lags); err != nil {
		return nil, err
	}
	return lags, nil
}
