package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Home says what a sandboxed command sees of the user's home directory.
const (
	HomeReadOnly = "read-only" // visible, not writable (the default)
	homeHidden   = "hidden"    // an empty directory in its place
)

// Profile says what a command may change and reach.
type Profile struct {
	// Name is how the user and the approval prompt call it ("project").
	Name string
	// Writable lists absolute directories the command may write to
	// (the session's cwd roots are added by the caller).
	Writable []string
	// Network allows the network; without it the command has only its
	// own loopback interface.
	Network bool
	// Home is HomeReadOnly (also when empty) or homeHidden.
	Home string
}

// Builtin returns the named profile, or an error naming the known ones:
//   - "project": the cwd roots writable, a private /tmp, $HOME read-only,
//     no network;
//   - "project-net": the same with the network;
//   - "strict": "project" with $HOME hidden.
func Builtin(name string) (Profile, error) {
	switch name {
	case "project":
		return Profile{Name: name, Home: HomeReadOnly}, nil
	case "project-net":
		return Profile{Name: name, Home: HomeReadOnly, Network: true}, nil
	case "strict":
		return Profile{Name: name, Home: homeHidden}, nil
	}
	return Profile{}, fmt.Errorf("unknown sandbox profile %q (known: %s)", name, strings.Join(names, ", "))
}

// names lists the built-in profiles.
var names = []string{"project", "project-net", "strict"}

// Validate reports the first thing wrong with p.
func (p Profile) Validate() error {
	if p.Name == "" {
		return errors.New("sandbox profile has no name")
	}
	switch p.Home {
	case "", HomeReadOnly, homeHidden:
	default:
		return fmt.Errorf("sandbox profile %q: home %q is neither %q nor %q", p.Name, p.Home, HomeReadOnly, homeHidden)
	}
	for _, dir := range p.Writable {
		if !filepath.IsAbs(dir) {
			return fmt.Errorf("sandbox profile %q: writable directory %q is not an absolute path", p.Name, dir)
		}
	}
	return nil
}

// Describe is the profile in a few words for people: "project (no
// network; writes only in /src/app)".
func (p Profile) Describe() string {
	var what []string
	if !p.Network {
		what = append(what, "no network")
	}
	if p.Home == homeHidden {
		what = append(what, "home hidden")
	}
	if len(p.Writable) > 0 {
		what = append(what, "writes only in "+strings.Join(p.Writable, ", "))
	} else {
		what = append(what, "writes nowhere but its /tmp")
	}
	return p.Name + " (" + strings.Join(what, "; ") + ")"
}

// Command returns the argv that runs argv in dir confined by p, and
// fails when p is invalid, dir is not absolute or bubblewrap cannot run
// here (Available).
func (p Profile) Command(argv []string, dir string) ([]string, error) {
	prefix, err := p.Prefix(dir)
	if err != nil {
		return nil, err
	}
	return append(prefix, argv...), nil
}

// Prefix is Command without the command: the bwrap argv, ending in "--",
// to put in front of any command that runs in dir.
func (p Profile) Prefix(dir string) ([]string, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("sandbox: working directory %q is not absolute", dir)
	}
	bwrap, err := Available()
	if err != nil {
		return nil, err
	}
	args := []string{bwrap,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--die-with-parent",
	}
	if home, err := os.UserHomeDir(); err == nil && p.Home == homeHidden && home != "/" {
		args = append(args, "--tmpfs", home)
	}
	if !p.Network {
		args = append(args, "--unshare-net")
	}
	// Writable directories come after the tmpfs mounts, so one under
	// /tmp or $HOME is still there. Deduplicated, shortest first (a
	// parent's bind must not hide a child's).
	dirs := slices.Clone(p.Writable)
	slices.SortFunc(dirs, func(a, b string) int { return len(a) - len(b) })
	if !within(dir, dirs) {
		// The working directory stays visible (read-only) even under
		// the private /tmp or a hidden $HOME.
		args = append(args, "--ro-bind", dir, dir)
	}
	for _, d := range slices.Compact(dirs) {
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("sandbox profile %q: writable directory %q: %w", p.Name, d, err)
		}
		args = append(args, "--bind", d, d)
	}
	return append(args, "--chdir", dir, "--"), nil
}

// within reports whether dir is one of roots or below one.
func within(dir string, roots []string) bool {
	for _, r := range roots {
		if dir == r || strings.HasPrefix(dir, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

var probe struct {
	once sync.Once
	path string
	err  error
}

// Available returns bwrap's path once it has run a trivial command here,
// or why it cannot: not installed, or the kernel refuses it the
// namespaces it needs (unprivileged user namespaces disabled), or this
// is not Linux (check_linux.go, check_other.go).
func Available() (string, error) {
	probe.once.Do(func() { probe.path, probe.err = check() })
	return probe.path, probe.err
}

// unavailable is why there is no sandbox on goos (not Linux): a session
// asked to sandbox its commands does not start, saying so; nothing runs
// unconfined in its place.
func unavailable(goos string) error {
	name := map[string]string{"darwin": "macOS", "freebsd": "FreeBSD"}[goos]
	if name == "" {
		name = goos
	}
	return fmt.Errorf("the sandbox (terminal.sandbox) is not available on %s: agentrun confines commands with bubblewrap, which runs only on Linux; set terminal.sandbox = false to run the agent's commands unconfined", name)
}
