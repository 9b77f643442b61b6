package termhost

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentrun/agentrun.nvim/termhost/shellinteg"
)

// integrateShell rewrites a shell's argv and environment so that it loads
// agentrun's shell integration (Spec.ShellIntegration). The scripts go to
// a directory of this terminal's own under the Host's shell directory, so
// no shell can read a script another Create is writing. A shell we have no
// script for starts unchanged. It returns the nonce the shell got and the
// terminal's script directory ("" when none).
func (h *Host) integrateShell(id, path string, argv, env []string, nonce string) (_, _ []string, _, scripts string, _ error) {
	if !shellinteg.Supported(path) {
		h.opts.Logf("termhost: %s: no shell integration for %s; it starts without command detection", id, path)
		return argv, env, nonce, "", nil
	}
	if nonce == "" {
		var err error
		if nonce, err = shellinteg.NewNonce(); err != nil {
			return nil, nil, "", "", err
		}
	}
	base, err := h.shellScriptsDir()
	if err != nil {
		return nil, nil, "", "", err
	}
	scripts = filepath.Join(base, id)
	launch, err := shellinteg.Prepare(path, env, nonce, scripts)
	if errors.Is(err, shellinteg.ErrUnsupportedShell) {
		return argv, env, nonce, "", nil
	}
	if err != nil {
		return nil, nil, "", "", fmt.Errorf("shell integration for %s: %w", path, err)
	}
	// Keep argv[0] as the caller named the shell (a login shell's "-bash"
	// stays one); the rest is what Prepare asks for.
	out := append([]string{argv[0]}, launch.Argv[1:]...)
	return out, launch.Env, nonce, scripts, nil
}

// shellScriptsDir returns the Host's directory for shell integration
// scripts, creating it on first use.
func (h *Host) shellScriptsDir() (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", ErrHostClosed
	}
	if h.shellDir == "" {
		dir, err := os.MkdirTemp("", "agentrun-shell-")
		if err != nil {
			return "", fmt.Errorf("shell integration dir: %w", err)
		}
		h.shellDir = dir
	}
	return h.shellDir, nil
}

// removeShellDir deletes the scripts once every shell is gone (Close).
func (h *Host) removeShellDir() {
	h.mu.Lock()
	dir := h.shellDir
	h.shellDir = ""
	h.mu.Unlock()
	if dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			h.opts.Logf("termhost: removing %s: %v", dir, err)
		}
	}
}
