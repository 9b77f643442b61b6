//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/neovim/go-client/nvim"
)

// startNvim starts a headless Neovim with the probe module (and, when
// pluginRoot is set, the plugin) on its runtimepath.
func startNvim(pluginRoot string) (*nvim.Nvim, error) {
	benchDir, err := filepath.Abs("bench")
	if err != nil {
		return nil, err
	}
	args := []string{"--headless", "--clean", "--embed", "-n", "-i", "NONE",
		"--cmd", "set rtp^=" + benchDir,
		"--cmd", "lua package.path = '" + benchDir + "/?.lua;' .. package.path"}
	if pluginRoot != "" {
		args = append(args, "--cmd", "set rtp^="+pluginRoot, "--cmd", "runtime plugin/agentrun.lua")
	}
	bin := os.Getenv("AGENTRUN_NVIM") // make bench NVIM=0.12 sets it
	if bin == "" {
		bin = "nvim"
	}
	v, err := nvim.NewChildProcess(nvim.ChildProcessCommand(bin), nvim.ChildProcessArgs(args...), nvim.ChildProcessServe(true),
		nvim.ChildProcessLogf(func(string, ...any) {}))
	if err != nil {
		return nil, fmt.Errorf("start nvim: %w", err)
	}
	// Terminal buffers need a window of realistic size.
	if err := v.ExecLua("vim.o.columns = 120; vim.o.lines = 40", nil); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

// luaValue evaluates a Lua expression in v.
func luaValue(v *nvim.Nvim, expr string, result any, args ...any) error {
	return v.ExecLua("return "+expr, result, args...)
}

// pollLua evaluates expr every 20 ms until it returns true or timeout passes.
func pollLua(v *nvim.Nvim, expr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		if err := luaValue(v, expr, &ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", timeout, expr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// nvimVersion is the first line of `nvim --version` of the Neovim the
// bench runs.
func nvimVersion() string {
	bin := os.Getenv("AGENTRUN_NVIM")
	if bin == "" {
		bin = "nvim"
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return bin + " (" + err.Error() + ")"
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return first + " (" + bin + ")"
}
