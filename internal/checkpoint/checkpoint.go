package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/rundir"
)

// Why this file is long: every operation Lua asks of a checkpoint (make,
// compare, read, put back) is here, so that one place holds the git
// plumbing for both this machine and another.

// Args is what "checkpoint" is asked: Op names the operation; the
// others are its operands (see Do).
type Args struct {
	Op     string   `msgpack:"op"`
	Dir    string   `msgpack:"dir"`    // snapshot: the session's folder
	Base   string   `msgpack:"base"`   // snapshot: the checkpoint folder ("": this machine's state folder's)
	Budget int64    `msgpack:"budget"` // snapshot: the copies' size budget (bytes; 0: defaultCopiesBytes)
	Top    string   `msgpack:"top"`    // the folder checkpointed (snapshot's answer)
	Store  string   `msgpack:"store"`  // its own git directory outside git ("" in a git work tree)
	Index  string   `msgpack:"index"`  // agentrun's index file in a git work tree
	A      string   `msgpack:"a"`      // a tree
	B      string   `msgpack:"b"`      // another tree
	Path   string   `msgpack:"path"`   // a path relative to Top
	Paths  []string `msgpack:"paths"`  // paths relative to Top
	Patch  []string `msgpack:"patch"`  // lines of a patch (unapply)
}

// defaultCopiesBytes is the copies' budget when Lua does not say.
const defaultCopiesBytes = 100 << 20

// checkpointFileBytes: a file larger than this that git does not track
// (in a git work tree), or any (outside git), is left out of a checkpoint.
const checkpointFileBytes = 1 << 20

// keptStoreAge: the copies of a folder not checkpointed for this long
// are removed.
const keptStoreAge = 14 * 24 * time.Hour

// Do ("checkpoint", its first argument the session whose folder it is,
// for the routing to this machine) does one operation on a checkpoint. The answer is a table; "why" in it says what failed, in a
// sentence.
func Do(_ string, a Args) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := place{top: a.Top, store: a.Store, index: a.Index}
	switch a.Op {
	case "snapshot":
		return takeCheckpoint(ctx, a)
	case "changed":
		out, err := p.git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-status", a.A, a.B)
		if err != nil {
			return why("the files changed between two checkpoints", err), nil
		}
		files := []map[string]string{}
		f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		for i := 0; i+1 < len(f); i += 2 {
			files = append(files, map[string]string{"status": f[i][:1], "path": f[i+1]})
		}
		return map[string]any{"files": files}, nil
	case "blob":
		out, err := p.git(ctx, nil, "rev-parse", "-q", "--verify", a.A+":"+a.Path)
		if err != nil {
			return map[string]any{}, nil // not in the tree
		}
		return map[string]any{"blob": strings.TrimSpace(string(out))}, nil
	case "text":
		out, err := p.git(ctx, nil, "cat-file", "blob", a.A+":"+a.Path)
		if err != nil {
			return map[string]any{}, nil
		}
		return map[string]any{"text": string(out)}, nil
	case "read":
		full, err := p.file(a.Path)
		if err != nil {
			return why(a.Path, err), nil
		}
		data, err := os.ReadFile(full)
		if err != nil {
			return map[string]any{}, nil // no such file (now)
		}
		return map[string]any{"text": string(data)}, nil
	case "hash":
		full, err := p.file(a.Path)
		if err != nil {
			return why(a.Path, err), nil
		}
		if fi, err := os.Stat(full); err != nil || !fi.Mode().IsRegular() {
			return map[string]any{}, nil
		}
		out, err := p.git(ctx, nil, "hash-object", "--", a.Path)
		if err != nil {
			return why(a.Path, err), nil
		}
		return map[string]any{"blob": strings.TrimSpace(string(out))}, nil
	case "restore":
		if _, err := p.git(ctx, nil, "restore", "--source="+a.A, "--worktree", "--", ":(literal)"+a.Path); err != nil {
			return why(a.Path, err), nil
		}
		return map[string]any{"ok": true}, nil
	case "remove":
		full, err := p.file(a.Path)
		if err != nil {
			return why(a.Path, err), nil
		}
		if err := os.Remove(full); err != nil {
			return why(a.Path, err), nil
		}
		return map[string]any{"ok": true}, nil
	case "diff":
		args := []string{"-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff", "--no-renames", "--no-textconv", a.A, a.B, "--"}
		for _, path := range a.Paths {
			args = append(args, ":(literal)"+path)
		}
		out, err := p.git(ctx, nil, args...)
		if err != nil {
			return why("the diff", err), nil
		}
		return map[string]any{"lines": lines(out)}, nil
	case "unapply":
		patch := []byte(strings.Join(a.Patch, "\n") + "\n")
		if _, err := p.git(ctx, patch, "apply", "-R", "--whitespace=nowarn", "-"); err != nil {
			return why("git apply", err), nil
		}
		return map[string]any{"ok": true}, nil
	}
	return nil, fmt.Errorf("checkpoint: no operation %q", a.Op)
}

// why is an answer saying what failed.
func why(what string, err error) map[string]any {
	return map[string]any{"why": fmt.Sprintf("%s: %v", what, err)}
}

func lines(out []byte) []string {
	text := strings.TrimSuffix(string(out), "\n")
	if text == "" {
		return []string{}
	}
	return strings.Split(text, "\n")
}

// place is a folder checkpointed: top, and its own git directory (store,
// outside git) or agentrun's index file for it (index, in a git work tree).
type place struct {
	top, store, index string
}

// git runs git on p (stdin: its input, nil for none) and returns its
// output, or an error holding git's first line of complaint.
func (p place) git(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	full := []string{"-C", p.top}
	if p.store != "" {
		full = append(full, "--git-dir="+p.store, "--work-tree="+p.top)
	}
	cmd := exec.CommandContext(ctx, "git", append(full, args...)...)
	cmd.Env = os.Environ()
	if p.index != "" {
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+p.index)
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if first == "" {
			first = err.Error()
		}
		return out, errors.New(first)
	}
	return out, nil
}

// file is path (relative to p.top) as an absolute path, refused when it
// leads out of p.top.
func (p place) file(path string) (string, error) {
	full := filepath.Join(p.top, path)
	if rel, err := filepath.Rel(p.top, full); err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(path) {
		return "", fmt.Errorf("%q is not inside %s", path, p.top)
	}
	return full, nil
}

// storeName is the file name a folder's index or store is kept under.
func storeName(top string) string {
	return strings.NewReplacer("/", "%", "\\", "%", ":", "%").Replace(top)
}

// takeCheckpoint takes a checkpoint of a.Dir: {top, store, index, tree}, or
// {why} saying why none could be taken.
func takeCheckpoint(ctx context.Context, a Args) (map[string]any, error) {
	base := a.Base
	if base == "" {
		base = rundir.StateDir("checkpoint")
	}
	if a.Dir == "" {
		// a session on another machine with no folder named: its home
		a.Dir, _ = os.UserHomeDir()
	}
	if base == "" || a.Dir == "" {
		return map[string]any{"why": "no folder to keep checkpoints in"}, nil
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return why(base, err), nil
	}
	budget := a.Budget
	if budget <= 0 {
		budget = defaultCopiesBytes
	}
	p := place{top: a.Dir}
	if out, err := p.git(ctx, nil, "rev-parse", "--show-toplevel"); err == nil {
		p.top = strings.TrimSpace(string(out))
		p.index = filepath.Join(base, storeName(p.top)+".index")
		tree, err := p.take(ctx, base, 0, true)
		if err != nil && fileExists(p.index) {
			// an index file git refuses (a copy of a split or newer index, a
			// damaged one) is made again from nothing
			_ = os.Remove(p.index)
			tree, err = p.take(ctx, base, 0, false)
		}
		if err != nil {
			return why("a checkpoint of "+p.top, err), nil
		}
		return map[string]any{"top": p.top, "index": p.index, "tree": tree}, nil
	}
	// outside git: the folder's own store under base
	dir, err := filepath.Abs(a.Dir)
	if err != nil {
		return why(a.Dir, err), nil
	}
	if home, _ := os.UserHomeDir(); dir == "/" || dir == filepath.Clean(home) {
		return map[string]any{"why": dir + " is the home folder, outside git: start the session in a project's folder to keep its turns"}, nil
	}
	p = place{top: dir, store: filepath.Join(base, storeName(dir)+".git")}
	fresh := sweepStores(base, p.store, budget)
	if !fileExists(p.store) {
		if out, err := exec.CommandContext(ctx, "git", "init", "-q", "--bare", p.store).CombinedOutput(); err != nil {
			return why("git init "+p.store, fmt.Errorf("%s", strings.TrimSpace(string(out)))), nil
		}
	}
	now := time.Now()
	_ = os.Chtimes(p.store, now, now) // its last use, for the sweep
	tree, err := p.take(ctx, base, budget, false)
	if err != nil {
		return why("a checkpoint of "+dir, err), nil
	}
	return map[string]any{"top": p.top, "store": p.store, "tree": tree, "fresh": fresh}, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// take writes the tree of p as it is now (seeded, in a git work tree
// with no index file yet, from a copy of the repository's index: its
// stat data spares reading every tracked file again). Files over
// checkpointFileBytes git does not track are left out (outside git:
// every such file, and the state folder holding base when it is inside
// p.top). With budget (outside git) the files' sizes together must be
// within it.
func (p place) take(ctx context.Context, base string, budget int64, seed bool) (string, error) {
	if seed && !fileExists(p.index) {
		if out, err := p.git(ctx, nil, "rev-parse", "--path-format=absolute", "--git-path", "index"); err == nil {
			if data, err := os.ReadFile(strings.TrimSpace(string(out))); err == nil {
				_ = os.WriteFile(p.index, data, 0o600)
			}
		}
	}
	spec := []string{"--", "."}
	if p.store != "" {
		// the state folder (agentrun's own files, Neovim's log) is never
		// the project's: left out by the store's own exclude file
		state := filepath.Dir(filepath.Dir(base))
		if rel, err := filepath.Rel(p.top, state); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			_ = os.MkdirAll(filepath.Join(p.store, "info"), 0o700)
			_ = os.WriteFile(filepath.Join(p.store, "info", "exclude"), []byte("/"+filepath.ToSlash(rel)+"/\n"), 0o600)
		}
	}
	list := []string{"ls-files", "-z", "-o", "--exclude-standard"}
	if p.store != "" {
		list = []string{"ls-files", "-z", "-c", "-o", "--exclude-standard"}
	}
	out, err := p.git(ctx, nil, append(list, spec...)...)
	if err != nil {
		return "", err
	}
	var total int64
	for _, path := range strings.Split(string(out), "\x00") {
		if path == "" {
			continue
		}
		fi, err := os.Lstat(filepath.Join(p.top, path))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > checkpointFileBytes {
			spec = append(spec, ":(exclude,literal)"+path)
			continue
		}
		total += fi.Size()
	}
	if budget > 0 && total > budget {
		return "", fmt.Errorf("its files take %d MiB, more than the %d MiB the copies may (checkpoint.copies_bytes)", total>>20, budget>>20)
	}
	if _, err := p.git(ctx, nil, append([]string{"-c", "core.quotePath=false", "add", "-A"}, spec...)...); err != nil {
		return "", err
	}
	out, err = p.git(ctx, nil, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// sweepStores removes the stores under base not used for keptStoreAge,
// then, while together they take more than budget, the least recently
// used, own last. It reports whether own was removed (its checkpoints
// are gone).
func sweepStores(base, own string, budget int64) bool {
	entries, err := os.ReadDir(base)
	if err != nil {
		return false
	}
	type store struct {
		path string
		used time.Time
		size int64
	}
	var stores []store
	var total int64
	for _, e := range entries {
		if !e.IsDir() || !strings.HasSuffix(e.Name(), ".git") {
			continue
		}
		path := filepath.Join(base, e.Name())
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if path != own && time.Since(fi.ModTime()) > keptStoreAge {
			_ = os.RemoveAll(path)
			continue
		}
		s := store{path: path, used: fi.ModTime(), size: dirSize(path)}
		total += s.size
		stores = append(stores, s)
	}
	sort.Slice(stores, func(i, j int) bool {
		if (stores[i].path == own) != (stores[j].path == own) {
			return stores[j].path == own
		}
		return stores[i].used.Before(stores[j].used)
	})
	removed := false
	for _, s := range stores {
		if total <= budget {
			break
		}
		_ = os.RemoveAll(s.path)
		total -= s.size
		removed = removed || s.path == own
	}
	return removed
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
