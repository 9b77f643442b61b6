package editor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// callNvim runs one call into Neovim, giving up when ctx ends (the call
// itself then finishes in the background).
func callNvim(ctx context.Context, call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// nvimFile runs call, which asks Neovim for its buffer of a file, when
// Neovim runs on this machine; on another (a remote backend, setupArgs.Site)
// its buffers hold that machine's files, so the file is this machine's
// disk alone and call is not made.
func (b *Bridge) nvimFile(ctx context.Context, call func() error) error {
	if b.remoteSite() != "" {
		return nil
	}
	return callNvim(ctx, call)
}

// bufferRead is what require("agentrun.fs").read returns.
type bufferRead struct {
	Loaded bool   `msgpack:"loaded"`
	Text   string `msgpack:"text"`
}

// ReadTextFile answers an agent's fs/read_text_file (agentEditor): a loaded buffer's current (maybe
// unsaved) text, else the file; line (1-based) and limit select lines.
func (b *Bridge) ReadTextFile(ctx context.Context, req acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	if !filepath.IsAbs(req.Path) {
		return acpsdk.ReadTextFileResponse{}, fmt.Errorf("path %q is not absolute", req.Path)
	}
	var r bufferRead
	err := b.nvimFile(ctx, func() error {
		return b.nvimLink().ExecLua(`return require("agentrun.fs").read(...)`, &r, req.Path)
	})
	if err != nil {
		return acpsdk.ReadTextFileResponse{}, fmt.Errorf("read buffer of %q: %w", req.Path, err)
	}
	text := r.Text
	if !r.Loaded {
		data, err := os.ReadFile(req.Path)
		if err != nil {
			return acpsdk.ReadTextFileResponse{}, err
		}
		text = string(data)
	}
	b.log.Debug("fs read", "path", req.Path, "buffer", r.Loaded)
	return acpsdk.ReadTextFileResponse{Content: selectLines(text, req.Line, req.Limit)}, nil
}

// selectLines returns limit lines of text from line (1-based); nil means
// from the first / to the end.
func selectLines(text string, line, limit *int) string {
	if line == nil && limit == nil {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	from := 0
	if line != nil && *line > 1 {
		from = *line - 1
	}
	if from >= len(lines) {
		return ""
	}
	to := len(lines)
	if limit != nil && *limit >= 0 && from+*limit < to {
		to = from + *limit
	}
	return strings.Join(lines[from:to], "")
}

// bufferWrite is what require("agentrun.fs").write returns.
type bufferWrite struct {
	Loaded      bool `msgpack:"loaded"`
	Saved       bool `msgpack:"saved"`
	WasModified bool `msgpack:"was_modified"`
}

// errUnsavedBuffer is the agent's answer to a write into a buffer with
// unsaved changes of the user's.
var errUnsavedBuffer = errors.New("the user has unsaved changes to this file in the editor, so your text was neither put into their buffer nor written to disk; they are shown your version beside theirs to take what they want. Read the file again before changing it")

// WriteTextFile answers an agent's fs/write_text_file (agentEditor):
// through a loaded buffer (one undo step, then saved), else atomically to
// disk. A buffer with unsaved changes of the user's is left as it is: Lua
// shows the agent's text beside it, and the agent is told it was not
// written (errUnsavedBuffer).
func (b *Bridge) WriteTextFile(ctx context.Context, req acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	if !filepath.IsAbs(req.Path) {
		return acpsdk.WriteTextFileResponse{}, fmt.Errorf("path %q is not absolute", req.Path)
	}
	var r bufferWrite
	err := b.nvimFile(ctx, func() error {
		return b.nvimLink().ExecLua(`return require("agentrun.fs").write(...)`, &r, req.Path, req.Content)
	})
	if err != nil {
		return acpsdk.WriteTextFileResponse{}, fmt.Errorf("write through the buffer of %q: %w", req.Path, err)
	}
	if r.Loaded && r.WasModified {
		b.log.Info("fs write not made: the buffer has unsaved changes of the user's; their buffer and the agent's version are shown side by side", "path", req.Path)
		return acpsdk.WriteTextFileResponse{}, errUnsavedBuffer
	}
	if r.Loaded {
		b.log.Info("fs write through the buffer, saved", "path", req.Path)
		return acpsdk.WriteTextFileResponse{}, nil
	}
	if err := writeFileAtomic(req.Path, []byte(req.Content)); err != nil {
		return acpsdk.WriteTextFileResponse{}, err
	}
	b.log.Info("fs write to disk", "path", req.Path, "bytes", len(req.Content))
	return acpsdk.WriteTextFileResponse{}, nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename, keeping an existing file's mode and writing
// through a symlink to its target.
func writeFileAtomic(path string, data []byte) error {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %q: %w", dir, err)
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%q is not a regular file", path)
		}
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".agentrun-*")
	if err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %q: %w", tmp, err)
	}
	if err := f.Chmod(mode); err != nil {
		_ = f.Close()
		return fmt.Errorf("chmod %q: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync %q: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %q: %w", tmp, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return fmt.Errorf("rename %q to %q: %w", tmp, target, err)
	}
	ok = true
	return nil
}
