package hostcli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
	"github.com/agentrun/agentrun.nvim/internal/sshlink"
)

// Version is this agentrun's version (main sets it): a remote's agentrun
// must be the same.
var Version = "dev"

// site is where the hosts are: this machine (their sockets in the
// user's socket directory), or a remote one reached over SSH (package
// sshlink), whose terminals are named ssh://host/PID:term-N.
type site struct {
	target *sshlink.Target // nil: this machine
	remote *sshlink.Remote // the link to it, started again when it drops
}

// openSite returns the site arg names and the rest of arg: "ssh://host"
// or "ssh://host/PID:term-N" is a remote (the link is started), anything
// else this machine.
func openSite(ctx context.Context, arg string) (*site, string, error) {
	if !sshlink.IsURL(arg) {
		return &site{}, arg, nil
	}
	t, rest, err := sshlink.Parse(arg)
	if err != nil {
		return nil, "", err
	}
	s := &site{target: &t, remote: sshlink.NewRemote(t, Version)}
	if err := s.remote.Relink(ctx); err != nil {
		return nil, "", err
	}
	return s, rest, nil
}

// current is the link (nil on this machine).
func (s *site) current() *sshlink.Link {
	if s.remote == nil {
		return nil
	}
	return s.remote.Current()
}

func (s *site) isRemote() bool { return s.target != nil }

// openTerminal opens the site arg names and finds the terminal it names
// there (close the site when done).
func openTerminal(ctx context.Context, arg string) (*site, hostTerm, error) {
	s, rest, err := openSite(ctx, arg)
	if err != nil {
		return nil, hostTerm{}, err
	}
	h, err := find(ctx, s, rest)
	if err != nil {
		s.close()
		return nil, hostTerm{}, err
	}
	return s, h, nil
}

// close ends the link, if any.
func (s *site) close() {
	if s.remote != nil {
		s.remote.Close()
	}
}

// prefix is put before a terminal's PID:term-N.
func (s *site) prefix() string {
	if s.target == nil {
		return ""
	}
	return s.target.String() + "/"
}

// where names the site for a person.
func (s *site) where() string {
	if s.target == nil {
		return "this machine"
	}
	return s.target.String()
}

// hosts lists the site's hosts.
func (s *site) hosts(ctx context.Context) ([]rundir.Host, error) {
	l := s.current()
	if l == nil {
		return rundir.Hosts()
	}
	pids, err := l.Hosts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]rundir.Host, len(pids))
	for i, pid := range pids {
		out[i] = rundir.Host{PID: pid}
	}
	return out, nil
}

// connect opens an AHP connection to host h (not initialized).
func (s *site) connect(ctx context.Context, h rundir.Host) (*client.Client, error) {
	l := s.current()
	if l == nil {
		return client.Dial(ctx, h.Socket, clientID())
	}
	nc, err := l.Open(h.PID)
	if err != nil {
		return nil, err
	}
	return client.New(nc, clientID()), nil
}

// dial connects to host h and initializes.
func (s *site) dial(ctx context.Context, h rundir.Host, subs ...string) (*client.Client, ahp.InitializeResult, error) {
	c, err := s.connect(ctx, h)
	if err != nil {
		return nil, ahp.InitializeResult{}, err
	}
	res, err := c.Initialize(ctx, subs...)
	if err != nil {
		c.Close()
		var aerr *client.Error
		if s.isRemote() && !errors.As(err, &aerr) {
			// The host's end closed before it answered: gone meanwhile,
			// or the link dropped.
			return nil, res, fmt.Errorf("the host %d on %s did not answer: it ended, or the link dropped", h.PID, s.where())
		}
		return nil, res, fmt.Errorf("host %s: %w", hostName(h), err)
	}
	return c, res, nil
}

// gone reports whether a host that did not answer has ended (its stale
// socket is removed then); remote hosts that do not answer are not
// listed by serve-stdio in the first place.
func (s *site) gone(h rundir.Host) bool {
	if s.isRemote() || h.PID <= 0 || processAlive(h.PID) {
		return false
	}
	_ = os.Remove(h.Socket)
	return true
}

func hostName(h rundir.Host) string {
	if h.Socket != "" {
		return h.Socket
	}
	return fmt.Sprint(h.PID)
}
