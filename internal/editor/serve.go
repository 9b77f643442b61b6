package editor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
)

// Serve runs the Neovim RPC host on stdio until Neovim disconnects (stdin
// EOF) or ctx ends; then it stops every agent and kills every terminal.
// A guard process (package guard) kills the terminals' sessions in its
// place if it dies without doing so.
func Serve(ctx context.Context, version string) error {
	// The RPC stream owns the real stdout; anything printed goes to stderr.
	rpcOut := os.Stdout
	os.Stdout = os.Stderr
	return ServeOn(ctx, version, os.Stdin, rpcOut)
}

// ServeOn is Serve on in and out in place of stdio: serve-backend's
// framed stream over the link (sshlink.BoxEnd). The caller has made
// sure nothing else writes to the stream.
func ServeOn(ctx context.Context, version string, in io.ReadCloser, rpcOut io.WriteCloser) error {

	// Neovim may be gone before we read the end of our stdin: a write into
	// the broken pipe must fail (EPIPE) rather than kill us (SIGPIPE, for
	// fd 1 and 2) before we have killed the terminals. Caught, not ignored:
	// the commands we start get the default disposition back.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	// The live heap is mostly long-lived terminal buffers (rendered text up
	// to each byte limit, the displays' raw logs) that no collection can
	// free; the rest is short-lived (JSON, msgpack). With the default GOGC
	// of 100 the heap grows to twice the live size before a collection; 50
	// keeps it near 1.5× (8 terminals at a 1 MiB limit: ~48 MB of RSS
	// instead of ~64) for a little more GC work. No memory limit: one below
	// the live heap (many terminals with big limits) would make the GC run
	// without pause. GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	logger, closeLog := openLog(os.Getenv("AGENTRUN_LOG"), os.Getenv("AGENTRUN_LOG_LEVEL"))
	defer closeLog()
	logger.Info("agentrun starting", "version", version, "pid", os.Getpid())

	b := newBridge(version, logger, startGuard(logger))
	v, served, err := b.serveLink(in, rpcOut)
	if err != nil {
		return err
	}
	go b.events.Run(b.deliver)

	for {
		select {
		case err = <-served:
			_ = v.Close()
			// Neovim's channel ended. From another machine (Site)
			// without a "shutdown" first, that is the link dropping,
			// not the user quitting: while a session runs, the backend
			// waits for a new link to take them over (linger.go).
			if ctx.Err() == nil && b.shouldLinger() {
				if c := b.linger(ctx); c != nil {
					if v, served, err = b.serveLink(c, c); err == nil {
						continue
					}
					logger.Error("a new link failed", "err", err)
				}
			}
			// Its commands keep running, as detached terminals, for
			// :AgentAttach ssh://… to pick up.
			b.linkDropped()
		case <-ctx.Done():
			logger.Info("signalled", "err", ctx.Err())
			_ = v.Close()
		}
		break
	}
	b.shutdown(ctx)
	stopGuard(b.guard, logger) // after shutdown: every terminal is gone
	b.events.Close()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) && !errors.Is(err, net.ErrClosed) {
		logger.Error("rpc stream ended", "err", err)
		return fmt.Errorf("rpc stream: %w", err)
	}
	logger.Info("agentrun stopped")
	return nil
}

// openLog opens the log file (appending), or discards logs when path is
// empty or cannot be opened.
func openLog(path, level string) (*slog.Logger, func()) {
	if path == "" {
		return slog.New(slog.DiscardHandler), func() {}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "agentrun: log directory %q: %v\n", filepath.Dir(path), err)
		return slog.New(slog.DiscardHandler), func() {}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentrun: log file %q: %v\n", path, err)
		return slog.New(slog.DiscardHandler), func() {}
	}
	lvl := slog.LevelInfo
	switch strings.ToLower(level) {
	case "debug":
		lvl = slog.LevelDebug
	case "warn":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: lvl})), func() { _ = f.Close() }
}
