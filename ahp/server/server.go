package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/termhost"
	"golang.org/x/sync/errgroup"
)

// Bounds of what the server keeps for its clients.
const (
	// MaxQueueBytes is how far a client may fall behind before it is
	// disconnected.
	MaxQueueBytes = 16 << 20
	// replayEnvelopes and replayBytes bound the reconnect log.
	replayEnvelopes = 8192
	replayBytes     = 8 << 20
)

// Options configures a Server.
type Options struct {
	// Logf logs what happens (connections, refusals); nil: nothing.
	Logf func(format string, args ...any)
	// UID is the only user served; -1 or unset (0 is root) means the
	// server's own user: see New.
	UID int
	// Shell starts the terminals createTerminal asks for (default
	// $SHELL, else /bin/sh), with shell integration when it is bash or
	// zsh.
	Shell string
	// Changed, when set, is called (on a goroutine of the server's) when
	// a client connects or disconnects.
	Changed func()
	// Extensions serve methods beyond AHP's (agentrun's own, named
	// "agentrun/…") to initialized clients: params in, result or error out.
	// Each request runs on its own goroutine, so one that waits long does
	// not hold up the connection's others (their answers may come in any
	// order); ctx ends when the client disconnects.
	Extensions map[string]func(ctx context.Context, params json.RawMessage) (any, error)
	// Local is the client id of the editor in the server's own process,
	// which holds terminals without a connection; its claims count as a
	// connected client's until LocalGone.
	Local string
}

// Server serves one termhost.Host; see the package comment.
type Server struct {
	host *termhost.Host
	opts Options

	mu      sync.Mutex
	seq     uint64 // the last serverSeq given out
	log     replayLog
	conns   map[*conn]struct{}
	feeds   map[string]*feed // terminal URI → its feed
	root    ahp.RootState    // as of seq
	origins map[originKey]ahp.Origin
	// before is, per terminal a client holds, the claim it took it from:
	// letting go gives it back to that holder (s.mu).
	before   map[string]ahp.Claim
	feedsCtx context.Context
	feedsWG  sync.WaitGroup
	local    string // Options.Local while that editor is there
}

// originKey names a client's action by its terminal and the sequence
// number termhost published it with.
type originKey struct {
	uri string
	seq uint64
}

// New returns a server for h. Options.UID 0 is taken as "the server's own
// user" unless the server runs as root (then root is served, as it is
// the same user).
func New(h *termhost.Host, opts Options) *Server {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.UID <= 0 {
		opts.UID = os.Getuid()
	}
	if opts.Shell == "" {
		opts.Shell = os.Getenv("SHELL")
		if opts.Shell == "" {
			opts.Shell = "/bin/sh"
		}
	}
	return &Server{
		host:    h,
		opts:    opts,
		conns:   make(map[*conn]struct{}),
		feeds:   make(map[string]*feed),
		origins: make(map[originKey]ahp.Origin),
		before:  make(map[string]ahp.Claim),
		root:    ahp.RootState{Terminals: h.Listing()},
		local:   opts.Local,
	}
}

// LocalGone says the editor in the server's process has left: terminals
// its user held may now be claimed by any client.
func (s *Server) LocalGone() {
	s.mu.Lock()
	s.local = ""
	s.mu.Unlock()
}

// presentLocked returns the ids of the clients that are there: connected
// ones and the local editor (s.mu held).
func (s *Server) presentLocked() map[string]bool {
	ids := make(map[string]bool, len(s.conns)+1)
	for c := range s.conns {
		ids[c.clientID] = true
	}
	if s.local != "" {
		ids[s.local] = true
	}
	return ids
}

// Clients returns how many clients are connected.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Serve accepts connections on ln until ctx ends (it closes ln then) and
// returns once every connection and feed has stopped.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	g, ctx := errgroup.WithContext(ctx)
	s.mu.Lock()
	s.feedsCtx = ctx
	s.mu.Unlock()
	g.Go(func() error {
		<-ctx.Done()
		return ln.Close()
	})
	g.Go(func() error {
		s.watchRoot(ctx)
		return nil
	})
	g.Go(func() error {
		for {
			nc, err := ln.Accept()
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
					return nil
				}
				return fmt.Errorf("accept on %s: %w", ln.Addr(), err)
			}
			if err := s.checkPeer(nc); err != nil {
				s.opts.Logf("ahp server: refused a connection: %v", err)
				go refuse(nc, err)
				continue
			}
			g.Go(func() error {
				s.serveConn(ctx, nc)
				return nil
			})
		}
	})
	err := g.Wait()
	s.feedsWG.Wait()
	return err
}

// checkPeer lets only the server's user in.
func (s *Server) checkPeer(nc net.Conn) error { return CheckPeer(nc, s.opts.UID) }

// CheckPeer returns nil when the process at the other end of Unix socket
// connection nc runs as uid, else an error naming it (the peer's
// credentials from the kernel: peercred_linux.go, peercred_darwin.go).
func CheckPeer(nc net.Conn, uid int) error {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("a %T is not a Unix socket connection", nc)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred peer
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = peerOf(int(fd))
	}); err != nil {
		return err
	}
	if credErr != nil {
		return fmt.Errorf("reading the peer's credentials: %w", credErr)
	}
	if cred.uid != uid {
		return fmt.Errorf("process %d of uid %d is not the host's user (uid %d)", cred.pid, cred.uid, uid)
	}
	return nil
}

// peer is who is at the other end of a Unix socket, as the kernel says.
type peer struct {
	uid int
	pid int // 0 when the platform does not say
}

// Listen makes the socket at path (mode 0600; a stale one of a dead host
// is replaced, a live one is an error).
func Listen(path string) (net.Listener, error) {
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, fmt.Errorf("a host already listens on %s", path)
	}
	_ = os.Remove(path)
	// The directory (0700) keeps others out already; the mode is the
	// second lock.
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// listing returns the root listing as clients see it.
func (s *Server) listing() []ahp.TerminalInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rootIsLocked(s.host.Listing())
	return append([]ahp.TerminalInfo(nil), s.root.Terminals...)
}
