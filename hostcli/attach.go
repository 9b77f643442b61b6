package hostcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentrun/agentrun.nvim/ahpclient"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/agentrun/agentrun.nvim/termhost/ahp"
	"golang.org/x/term"
)

// DetachKey ends `agentrun attach` and leaves the terminal running:
// Ctrl-] (as telnet's escape).
const DetachKey = 0x1d

// Attach shows terminal arg on out: its scrollback first, then live. With
// take it claims the terminal, and what is typed on in goes to it; without,
// it only watches (the host refuses input from a client that does not
// hold the terminal). It returns at DetachKey, when the terminal ends, or
// when the host goes away.
func Attach(ctx context.Context, in *os.File, out io.Writer, arg string, take bool) error {
	h, err := find(ctx, arg)
	if err != nil {
		return err
	}
	c, _, err := dial(ctx, h.socket, ahp.RootURI)
	if err != nil {
		return err
	}
	defer c.Close()
	uri := h.info.Resource
	snap, err := c.Subscribe(ctx, uri)
	if err != nil {
		return fmt.Errorf("attach %s: %w", h.name(), err)
	}
	st, err := ahpclient.TerminalState(snap)
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
	say := func(format string, args ...any) {
		fmt.Fprintf(out, vtsafe.Reset+"\r\n[agentrun: "+format+"]\r\n", args...)
	}
	fmt.Fprint(out, st.Text())
	mine := func(cl ahp.Claim) bool { return cl.Kind == ahp.ClaimClient && cl.ClientID == c.ID() }
	holding := mine(st.Claim)
	mode := "read-only: agentrun attach --take " + h.name() + " to type into it"
	if take {
		mode = "you type into it"
	}
	say("attached to %s (%s), %s; Ctrl-] detaches", h.name(), h.info.Title, mode)
	if st.Exited() {
		say("it has ended (%s)", state(st.Info(uri)))
		return nil
	}
	if take && !holding {
		if _, err := c.Dispatch(ctx, ahp.ClaimedAction{Terminal: uri, Claim: ahp.ClientClaim(c.ID())}); err != nil {
			return err
		}
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
	toldReadOnly := false
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
				if holding && i > 0 {
					_, _ = c.Dispatch(ctx, ahp.InputAction{Terminal: uri, Data: string(k[:i])})
				}
				say("detached from %s; it keeps running", h.name())
				return nil
			}
			if holding {
				_, _ = c.Dispatch(ctx, ahp.InputAction{Terminal: uri, Data: string(k)})
			} else if !toldReadOnly || indexByte(k, 0x03) >= 0 {
				// Typing (Ctrl-C too) reaches nothing here: say so, once,
				// and each time Ctrl-C is pressed.
				toldReadOnly = true
				say("read-only: what you type does not reach %s (Ctrl-C neither); Ctrl-] detaches, agentrun attach --take %s types into it", h.name(), h.name())
			}
		case e, ok := <-c.Envelopes():
			if !ok {
				say("the host of %s went away", h.name())
				return fmt.Errorf("the host of %s closed the connection", h.name())
			}
			if e.RejectionReason != "" {
				if e.Origin != nil && e.Origin.ClientID == c.ID() {
					say("refused: %s", e.RejectionReason)
				}
				continue
			}
			if e.ServerSeq <= snap.FromSeq {
				continue
			}
			switch a := e.Action.(type) {
			case ahp.DataAction:
				if a.Terminal == uri {
					io.WriteString(out, a.Data)
				}
			case ahp.ClaimedAction:
				if a.Terminal == uri {
					was := holding
					holding = mine(a.Claim)
					if holding && !was {
						resize()
					} else if was && !holding {
						say("%s took it; you only watch now", holder(a.Claim))
					}
				}
			case ahp.ExitedAction:
				if a.Terminal == uri {
					ti := ahp.TerminalInfo{ExitCode: a.ExitCode, ExitSignal: a.ExitSignal}
					say("%s ended (%s)", h.name(), state(ti))
					return nil
				}
			case ahp.RootTerminalsChangedAction:
				if !listed(a.Terminals, uri) {
					say("%s was killed", h.name())
					return nil
				}
			}
		}
	}
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
