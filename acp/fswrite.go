package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// FileWrite is an agent's fs/write_text_file as the CheckWrite hook sees
// it.
type FileWrite struct {
	// Session is the ACP session id.
	Session string
	// Path is the path the agent gave.
	Path string
	// Real is the file the write would change: Path with every symlink
	// and ".." of its existing part resolved, as the kernel resolves it.
	Real string
	// Outside is true when Real is neither under the session's cwd nor
	// under one of AllowedCwdRoots.
	Outside bool
}

// RealPath resolves p (absolute) as a write to it would, one component
// at a time as the kernel does: each symlink that exists is followed and
// each ".." goes up from where that led; from the first component that
// does not exist on, the rest is what the write creates (plain
// directories), appended cleaned. A final symlink that leads nowhere is
// a file of its own (a write replaces it), so it is kept, not followed.
func RealPath(p string) string {
	parts := strings.Split(p, "/")
	cur := "/"
	for i, part := range parts {
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			r, err := filepath.EvalSymlinks(next)
			if err != nil {
				return filepath.Join(append([]string{next}, parts[i+1:]...)...)
			}
			next = r
		}
		cur = next
	}
	return cur
}

// checkWrite asks the CheckWrite hook whether req may be written.
func (a *Agent) checkWrite(ctx context.Context, s *Session, path string) *acpsdk.RequestError {
	if a.opts.CheckWrite == nil {
		return nil
	}
	w := FileWrite{Session: s.id, Path: path, Real: RealPath(path), Outside: true}
	for _, root := range append([]string{s.cwd}, a.opts.AllowedCwdRoots...) {
		if within(resolve(root), w.Real) {
			w.Outside = false
			break
		}
	}
	actx, release, held := s.holdForTurn(ctx)
	if !held {
		return internalError(fmt.Errorf("the user cancelled the turn; %s was not written", path))
	}
	defer release()
	ch := make(chan error, 1)
	go func() { ch <- a.opts.CheckWrite(actx, w) }()
	var err error
	select {
	case err = <-ch:
	case <-actx.Done():
		err = context.Cause(actx)
	}
	if errors.Is(context.Cause(actx), ErrTurnCancelled) {
		s.refuseCancelled(ctx)
		return internalError(fmt.Errorf("the user cancelled the turn; %s was not written", path))
	}
	var refusal *Refusal
	if errors.As(err, &refusal) {
		return internalError(errors.New(refusal.Why))
	}
	if err != nil {
		return internalError(fmt.Errorf("%s was not written: %w", path, err))
	}
	return nil
}
