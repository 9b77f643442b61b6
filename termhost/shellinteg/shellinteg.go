package shellinteg

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

//go:embed agentrun.bash zsh/zshenv zsh/zprofile zsh/zshrc
var scripts embed.FS

// Environment variables the scripts read (and unset).
const (
	// envNonce carries the nonce to the scripts.
	envNonce = "AGENTRUN_NONCE"
	// envUserZDOTDIR carries the user's own ZDOTDIR to the zsh scripts.
	envUserZDOTDIR = "AGENTRUN_USER_ZDOTDIR"
)

// ErrUnsupportedShell is returned (wrapped) by Prepare for a shell we have
// no script for; start that shell without integration.
var ErrUnsupportedShell = errors.New("no agentrun shell integration for this shell")

// Launch is how to start a shell with the integration injected.
type Launch struct {
	// Argv is the program (the shell as given to Prepare) and its arguments.
	Argv []string
	// Env is the complete environment for the shell.
	Env []string
}

// Supported reports whether Prepare has a script for shell (a name or a
// path such as "/bin/bash"; only the base name matters).
func Supported(shell string) bool {
	switch filepath.Base(shell) {
	case "bash", "zsh":
		return true
	}
	return false
}

// NewNonce returns a fresh random nonce for one shell.
func NewNonce() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("shell integration nonce: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Prepare writes the integration scripts for shell into dir (created if
// missing; the caller removes it when the shell is gone) and returns how
// to start the shell. env is the environment the shell would get without
// integration (nil means os.Environ()); nonce is what the terminal's
// Parser checks. A shell other than bash or zsh gives an error
// wrapping ErrUnsupportedShell.
func Prepare(shell string, env []string, nonce, dir string) (Launch, error) {
	if !Supported(shell) {
		return Launch{}, fmt.Errorf("shell %q: %w (supported: bash, zsh)", shell, ErrUnsupportedShell)
	}
	if nonce == "" || strings.ContainsAny(nonce, ";\a\x1b\n") {
		return Launch{}, fmt.Errorf("shell integration nonce %q must be non-empty and free of ';' and control characters", nonce)
	}
	if !filepath.IsAbs(dir) {
		return Launch{}, fmt.Errorf("shell integration dir %q is not absolute", dir)
	}
	if env == nil {
		env = os.Environ()
	}
	env = withoutKeys(env, envNonce, envUserZDOTDIR)
	env = append(env, envNonce+"="+nonce)

	switch filepath.Base(shell) {
	case "bash":
		rc := filepath.Join(dir, "agentrun.bash")
		if err := writeScript("agentrun.bash", rc); err != nil {
			return Launch{}, err
		}
		return Launch{Argv: []string{shell, "--init-file", rc, "-i"}, Env: env}, nil
	default: // zsh
		zdir := filepath.Join(dir, "zsh")
		for _, name := range []string{"zshenv", "zprofile", "zshrc"} {
			if err := writeScript("zsh/"+name, filepath.Join(zdir, "."+name)); err != nil {
				return Launch{}, err
			}
		}
		if user, ok := lookup(env, "ZDOTDIR"); ok && user != "" {
			env = append(env, envUserZDOTDIR+"="+user)
		}
		env = append(withoutKeys(env, "ZDOTDIR"), "ZDOTDIR="+zdir)
		return Launch{Argv: []string{shell, "-i"}, Env: env}, nil
	}
}

// writeScript copies the embedded script name to path.
func writeScript(name, path string) error {
	body, err := scripts.ReadFile(name)
	if err != nil {
		return fmt.Errorf("embedded shell integration %q: %w", name, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("shell integration dir: %w", err)
	}
	if err := os.WriteFile(path, body, 0o600); err != nil {
		return fmt.Errorf("write shell integration %q: %w", path, err)
	}
	return nil
}

// withoutKeys returns env without the entries for keys (a new slice).
func withoutKeys(env []string, keys ...string) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, key := range keys {
			if k == key {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// lookup returns the value of key in env (the last entry wins, as exec does).
func lookup(env []string, key string) (string, bool) {
	val, found := "", false
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			val, found = v, true
		}
	}
	return val, found
}
