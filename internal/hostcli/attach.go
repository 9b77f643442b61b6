package hostcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"golang.org/x/term"
)

// DetachKey ends `agentrun attach` and leaves the terminal running:
// Ctrl-] (as telnet's escape).
const DetachKey = 0x1d

// Attach shows terminal arg on out: its scrollback first, then live. With
// take it claims the terminal, and what is typed on in goes to it; without,
// it only watches (the host refuses input from a client that does not
// hold the terminal). It returns at DetachKey, when the terminal ends, or
// when the host goes away. arg may name a remote's terminal,
// ssh://host/PID:term-N: when the link drops, attach says so, starts it
// again and replays what it missed meanwhile (sshlink.Remote.Resume).
func Attach(ctx context.Context, in *os.File, out io.Writer, arg string, take bool) error {
	s, h, err := openTerminal(ctx, arg)
	if err != nil {
		return err
	}
	defer s.close()
	c, _, err := s.dial(ctx, h.host, ahp.RootURI)
	if err != nil {
		return err
	}
	defer func() { c.Close() }()
	uri := h.info.Resource
	snap, err := c.Subscribe(ctx, uri)
	if err != nil {
		return fmt.Errorf("attach %s: %w", h.name(), err)
	}
	st, err := client.TerminalState(snap)
	if err != nil {
		return err
	}
	if fd := int(in.Fd()); term.IsTerminal(fd) {
		old, err := term.MakeRaw(fd)
		if err != nil {
			return fmt.Errorf("raw mode: %w", err)
		}
		defer term.Restore(fd, old)
	}
	var outMu sync.Mutex // say is called from the reconnecting goroutine too
	write := func(s string) {
		outMu.Lock()
		io.WriteString(out, s)
		outMu.Unlock()
	}
	say := func(format string, args ...any) {
		write(fmt.Sprintf(vtsafe.Reset+"\r\n[agentrun: "+format+"]\r\n", args...))
	}
	write(st.Text())
	from := snap.FromSeq // actions up to here are in what was shown
	mine := func(cl ahp.Claim) bool { return cl.Kind == ahp.ClaimClient && cl.ClientID == c.ID() }
	holding := mine(st.Claim)
	mode := "read-only: agentrun attach --take " + h.name() + " to type into it"
	switch {
	case take && holding:
		mode = "you type into it"
	case take:
		// not ours until the host grants the claim: said then
		mode = "taking it over"
	}
	say("attached to %s (%s), %s; Ctrl-] detaches", h.label(), h.info.Title, mode)
	if st.Exited() {
		say("it has ended (%s)", state(st.Info(uri)))
		return nil
	}
	// What is typed while the claim is on its way waits for the host's
	// answer: typed once it is ours, dropped (and said) if refused.
	var claiming bool
	var early [][]byte
	refused := "" // why the host refused our --take
	if take && !holding {
		if _, err := c.Dispatch(ctx, ahp.ClaimedAction{Terminal: uri, Claim: ahp.ClientClaim(c.ID())}); err != nil {
			return err
		}
		claiming = true
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	keys := make(chan []byte)
	go readKeys(ctx, in, keys)
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	resize := func() {
		if cols, rows, err := term.GetSize(int(in.Fd())); err == nil && holding {
			_, _ = c.Dispatch(ctx, ahp.ResizedAction{Terminal: uri, Cols: cols, Rows: rows})
		}
	}
	// handle shows one action of the host; true when attach is over.
	handle := func(e ahp.Envelope) bool {
		if e.RejectionReason != "" {
			if e.Origin != nil && e.Origin.ClientID == c.ID() {
				say("refused: %s", e.RejectionReason)
				if _, ok := e.Action.(ahp.ClaimedAction); ok && claiming {
					claiming = false
					refused = e.RejectionReason
					if len(early) > 0 {
						say("what you typed meanwhile was not typed into %s", h.name())
						early = nil
					}
				}
			}
			return false
		}
		if e.ServerSeq <= from {
			return false
		}
		switch a := e.Action.(type) {
		case ahp.DataAction:
			if a.Terminal == uri {
				write(a.Data)
			}
		case ahp.ClaimedAction:
			if a.Terminal == uri {
				was := holding
				holding = mine(a.Claim)
				if holding && !was {
					resize()
					if claiming {
						say("%s is yours: you type into it", h.name())
					}
					claiming = false
					refused = ""
					for _, k := range early {
						_, _ = c.Dispatch(ctx, ahp.InputAction{Terminal: uri, Data: string(k)})
					}
					early = nil
				} else if was && !holding {
					say("%s took it; you only watch now", holder(ahp.TerminalInfo{Claim: a.Claim}))
				}
			}
		case ahp.ExitedAction:
			if a.Terminal == uri {
				ti := ahp.TerminalInfo{ExitCode: a.ExitCode, ExitSignal: a.ExitSignal}
				say("%s ended (%s)", h.name(), state(ti))
				return true
			}
		case ahp.RootTerminalsChangedAction:
			if !listed(a.Terminals, uri) {
				say("%s was closed by its host (killed there, or the Neovim running it quit)", h.name())
				return true
			}
		}
		return false
	}
	envelopes := c.Envelopes()
	var relinked chan relinkResult // while reconnecting
	toldReadOnly, toldReconnecting := false, false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-winch:
			resize()
		case k, ok := <-keys:
			if !ok {
				return nil // stdin ended: detach
			}
			if i := indexByte(k, DetachKey); i >= 0 {
				if holding && i > 0 && relinked == nil {
					_, _ = c.Dispatch(ctx, ahp.InputAction{Terminal: uri, Data: string(k[:i])})
				}
				say("detached from %s; it keeps running", h.name())
				return nil
			}
			switch {
			case relinked != nil:
				if !toldReconnecting {
					toldReconnecting = true
					say("not typed: reconnecting to %s; Ctrl-] detaches", s.where())
				}
			case holding:
				_, _ = c.Dispatch(ctx, ahp.InputAction{Terminal: uri, Data: string(k)})
			case claiming:
				early = append(early, k)
			case !toldReadOnly || indexByte(k, 0x03) >= 0:
				// Typing (Ctrl-C too) reaches nothing here: say so, once,
				// and each time Ctrl-C is pressed.
				toldReadOnly = true
				if refused != "" {
					// --take was refused: who holds it and what frees it
					say("read-only: what you type does not reach %s (Ctrl-C neither), %s", h.name(), refused)
				} else {
					say("read-only: what you type does not reach %s (Ctrl-C neither); Ctrl-] detaches, agentrun attach --take %s types into it", h.name(), h.name())
				}
			}
		case e, ok := <-envelopes:
			if ok {
				if handle(e) {
					return nil
				}
				continue
			}
			if !s.isRemote() {
				say("the host of %s went away", h.name())
				return fmt.Errorf("the host of %s closed the connection", h.name())
			}
			// Every action received was handled: resume after the last.
			lastSeen := c.LastSeen()
			c.Close()
			envelopes = nil
			why := "the connection to the host of " + h.name() + " ended"
			select {
			case <-s.current().Done():
				why = s.current().Err().Error()
			case <-time.After(100 * time.Millisecond):
			}
			say("%s; reconnecting (Ctrl-] detaches)", why)
			relinked = make(chan relinkResult, 1)
			toldReconnecting = false
			go func() {
				c, res, err := s.remote.Resume(ctx, h.host.PID, clientID(), h.name(), lastSeen, []string{ahp.RootURI, uri}, func(m string) { say("%s", m) })
				relinked <- relinkResult{c: c, res: res, err: err}
			}()
		case r := <-relinked:
			relinked = nil
			if r.err != nil {
				say("%v", r.err)
				return r.err
			}
			c = r.c
			envelopes = c.Envelopes()
			if slices.Contains(r.res.Missing, uri) {
				say("%s is gone from its host: it ended, or was killed, while the link was down", h.name())
				return nil
			}
			if r.res.Type == ahp.ReconnectSnapshot {
				// Too much happened for the host to replay: its copy of the
				// screen, shown again.
				if !slices.ContainsFunc(r.res.Snapshots, func(sn ahp.Snapshot) bool { return sn.Resource == uri }) {
					say("%s is gone from its host: it ended, or was killed, while the link was down", h.name())
					return nil
				}
				for _, sn := range r.res.Snapshots {
					if sn.Resource != uri {
						continue
					}
					st, err := client.TerminalState(sn)
					if err != nil {
						return err
					}
					say("reconnected to %s; more happened meanwhile than the host keeps to replay: the terminal again from its start", s.where())
					write(st.Text())
					from = sn.FromSeq
					holding = mine(st.Claim)
					if st.Exited() {
						say("%s ended (%s)", h.name(), state(st.Info(uri)))
						return nil
					}
				}
				continue
			}
			say("reconnected to %s; what was missed follows (%d actions)", s.where(), len(r.res.Actions))
			for _, e := range r.res.Actions {
				if handle(e) {
					return nil
				}
			}
		}
	}
}

// relinkResult is a reconnect's outcome.
type relinkResult struct {
	c   *client.Client
	res ahp.ReconnectResult
	err error
}

func listed(list []ahp.TerminalInfo, uri string) bool {
	for _, ti := range list {
		if ti.Resource == uri {
			return true
		}
	}
	return false
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// readKeys passes what is typed on in to keys until in ends.
func readKeys(ctx context.Context, in io.Reader, keys chan<- []byte) {
	defer close(keys)
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			select {
			case keys <- append([]byte(nil), buf[:n]...):
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			return
		}
	}
}
