// Package hostcli is the command line's view of agentrun's hosts:
// `agentrun ls` lists the terminals of every host of the user, `agentrun
// attach ID` makes the current terminal show one live (and type into it
// when it holds it), `agentrun kill ID` ends one. Each backend is a host
// with a socket in the user's socket directory (internal/rundir); an ID
// is "PID:term-N" (the host's process id and the terminal), or just
// "term-N" when only one host has a terminal of that name. A command run
// again (R in Neovim) keeps its first run's id, as Neovim shows it: ls
// lists its newest run under that id, with the run's number, and attach
// and kill take that id for the newest run (its own id works too).
package hostcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
)

// hostTerm is one terminal of one host.
type hostTerm struct {
	site *site
	host rundir.Host
	info ahp.TerminalInfo
	id   string
}

// name is the terminal's name as ls shows it and attach and kill take
// it: PID:term-N, after the machine's URL for another machine's. The
// id's "@site" (a backend serving a Neovim on another machine ends its
// ids with it) is left out, on that machine too: the pid names the
// backend, and the same terminal reads PID:term-N there and
// ssh://host/PID:term-N here, never PID:term-N@host.
func (h hostTerm) name() string {
	return fmt.Sprintf("%s%d:%s", h.site.prefix(), h.host.PID, ahp.ShortID(h.id))
}

// rowName is the name ls lists the terminal under and attach and kill
// take for it: a command's newest run is named by its first run (R in
// Neovim runs a command again under a new id, in the same row), any
// other terminal as name().
func (h hostTerm) rowName() string {
	if h.info.RunOf == "" {
		return h.name()
	}
	return fmt.Sprintf("%s%d:%s", h.site.prefix(), h.host.PID, ahp.ShortID(h.info.RunOf))
}

// label is how messages name the terminal: rowName, with the run's
// number for a command run again ("4420:term-1 (run 2)").
func (h hostTerm) label() string {
	if h.info.RunOf == "" {
		return h.name()
	}
	return fmt.Sprintf("%s (run %d)", h.rowName(), h.info.Run)
}

// replaced reports whether a newer run of the terminal's command took its
// row (ls leaves it out; its id still names it).
func (h hostTerm) replaced() bool { return h.info.ReplacedBy != "" }

// clientID names this CLI process to hosts.
func clientID() string { return fmt.Sprintf("cli-%d", os.Getpid()) }

// terminals lists the terminals of every live host of site s (stale
// sockets of dead hosts are removed).
func terminals(ctx context.Context, s *site) ([]hostTerm, error) {
	out, _, err := hostTerminals(ctx, s)
	return out, err
}

// hostTerminals is terminals, also returning the pids of the live hosts.
func hostTerminals(ctx context.Context, s *site) ([]hostTerm, []int, error) {
	hosts, err := s.hosts(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []hostTerm
	var live []int
	for _, host := range hosts {
		c, res, err := s.dial(ctx, host, ahp.RootURI)
		if err != nil {
			var aerr *client.Error
			if errors.As(err, &aerr) {
				return nil, nil, err // a host that answers and refuses: say so
			}
			s.gone(host)
			continue
		}
		live = append(live, host.PID)
		root, err := client.RootState(res.Snapshots[0])
		c.Close()
		if err != nil {
			return nil, nil, err
		}
		for _, ti := range root.Terminals {
			id, err := ahp.TerminalID(ti.Resource)
			if err != nil {
				continue
			}
			out = append(out, hostTerm{site: s, host: host, info: ti, id: id})
		}
	}
	if len(live) == 0 {
		if s.isRemote() {
			return nil, nil, fmt.Errorf("no agentrun host is running on %s: terminals are served by the backend of a Neovim that runs the plugin there (or one that left detached terminals)", s.where())
		}
		return nil, nil, errNoHost
	}
	return out, live, nil
}

// releasedGone says why a terminal a Neovim's :AgentTerminals still
// lists is not here: the host serves a terminal until it is released.
const releasedGone = "an agent's command that ended and was released has left its host; its Neovim's :AgentTerminals still shows it, to read"

var errNoHost = errors.New("no agentrun host is running: terminals are served by the backend of a Neovim that runs the plugin (or one that left detached terminals); start one with nvim -c AgentRun")

// processAlive reports whether pid names a process (signal 0: no
// signal, only the check; EPERM means it exists as another user's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// find returns the terminal of site s named by arg ("PID:term-N" or
// "term-N").
func find(ctx context.Context, s *site, arg string) (hostTerm, error) {
	if s.isRemote() && arg == "" {
		return hostTerm{}, fmt.Errorf("name a terminal after the host: %sPID:term-N (agentrun ls %s lists them)", s.prefix(), s.target)
	}
	all, err := terminals(ctx, s)
	if err != nil {
		return hostTerm{}, err
	}
	matches := match(all, arg)
	ls := "agentrun ls"
	if s.isRemote() {
		ls += " " + s.target.String()
	}
	switch len(matches) {
	case 0:
		if s.isRemote() {
			return hostTerm{}, fmt.Errorf("no terminal %q on any host on %s (%s lists them)", arg, s.where(), ls)
		}
		return hostTerm{}, fmt.Errorf("no terminal %q on any host (%s lists them); %s", arg, ls, releasedGone)
	case 1:
		return matches[0], nil
	}
	var names []string
	for _, m := range matches {
		names = append(names, m.name())
	}
	return hostTerm{}, fmt.Errorf("%q is on more than one host; name one of %s", arg, strings.Join(names, ", "))
}

// match returns the terminals arg names ("PID:term-N" or "term-N"): the
// newest run of the command whose row has that id (as ls lists it and
// Neovim's commands take it), else the terminal with that id (a run's
// own id, as its host names it).
func match(all []hostTerm, arg string) []hostTerm {
	names := func(h hostTerm, id string) bool {
		// the id as its host names it, or (another machine's) its short
		// form, as name() shows it
		for _, id := range []string{id, ahp.ShortID(id)} {
			if arg == fmt.Sprintf("%d:%s", h.host.PID, id) || arg == id {
				return true
			}
		}
		return false
	}
	var rows, own []hostTerm
	for _, h := range all {
		switch {
		case h.info.RunOf != "" && !h.replaced() && names(h, h.info.RunOf):
			rows = append(rows, h)
		case names(h, h.id):
			own = append(own, h)
		}
	}
	// a row's newest run stands for its first run's id on its host
	for _, h := range own {
		if !slices.ContainsFunc(rows, func(r hostTerm) bool { return r.host.PID == h.host.PID && r.info.RunOf == h.id }) {
			rows = append(rows, h)
		}
	}
	return rows
}

// state says how the terminal is: running, or how it ended.
func state(ti ahp.TerminalInfo) string {
	switch {
	case ti.ExitCode != nil:
		return fmt.Sprintf("exit %d", *ti.ExitCode)
	case ti.ExitSignal != "":
		return ti.ExitSignal
	}
	return "running"
}

// holder names who holds the terminal.
func holder(ti ahp.TerminalInfo) string {
	c := ti.Claim
	if c.Kind == ahp.ClaimClient && c.ClientID == ahp.DetachedClient {
		return "nobody (detached)"
	}
	if c.Kind == ahp.ClaimClient && ti.HolderGone {
		return "nobody (" + ahp.ClientName(c.ClientID) + " left)"
	}
	if c.Kind == ahp.ClaimClient {
		return ahp.ClientName(c.ClientID)
	}
	if c.ToolCallID != "" {
		return "agent (tool call)"
	}
	return "agent"
}

// age is how long ago ms (Unix milliseconds) was, roughly.
func age(ms int64) string {
	if ms == 0 {
		return "?"
	}
	d := time.Since(time.UnixMilli(ms)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
