package termhost

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/render"
	"github.com/agentrun/agentrun.nvim/termhost/shellinteg"
)

// The AHP wiring of a terminal (see doc.go, "AHP state and actions"): the
// read loop's bytes go through a shellinteg.Filter, which cuts shell integration
// markers out and hands every OSC payload over in stream order. What it
// passes on goes to the raw log, the rendered text and the state's content
// (terminal/data); each payload goes to the shellinteg.Parser, whose
// actions are applied in the same order. Every action applied gets the
// next sequence number; subscribers read them from a bounded log.

// liveState is one terminal's AHP state, its shell integration and its
// action stream.
type liveState struct {
	uri string // TerminalURI(id), put on every action

	// Owned by the read loop.
	filter  shellinteg.Filter
	si      *shellinteg.Parser
	partial [utf8.UTFMax]byte // an incomplete UTF-8 character held back
	npart   int
	out     func([]byte) // the read loop's callbacks, made once
	osc     func([]byte)

	mu      sync.Mutex
	state   ahp.TerminalState // the parts' text lives in text (content.go)
	text    contentRing
	starts  []int64 // where each part's text starts in the stream
	limits  ahp.ContentLimits
	seq     uint64 // of the last action applied
	log     actionLog
	subs    int           // open subscriptions; the log is kept only while > 0
	changed chan struct{} // closed at the next action; nil until someone waits
	claimed chan struct{} // closed at the next claim change; nil until someone waits
}

// initState sets up t's AHP state from its spec; nonce is the shell
// integration secret ("" trusts no command line).
func (t *Terminal) initState(nonce string) {
	a := &t.live
	a.uri = ahp.TerminalURI(t.id)
	a.si = shellinteg.NewParser(a.uri, nonce)
	a.out = t.passOn
	a.osc = t.handleOSC
	a.text.size = a.limits.MaxBytes
	if a.text.size <= 0 {
		a.text.size = ahp.DefaultContentBytes
	}
	a.state = ahp.TerminalState{
		Title:   t.spec.Title,
		Cwd:     ahp.FileURI(t.spec.Dir),
		Cols:    int(t.spec.Cols),
		Rows:    int(t.spec.Rows),
		Content: []ahp.ContentPart{},
		Claim:   t.spec.Claim,
	}
}

// publish applies a (not terminal/data) to the state, gives it the next
// sequence number and wakes whoever waits for it; a change the root
// listing shows (title, claim, exit) updates the listing. It returns the
// action's sequence number.
func (t *Terminal) publish(act ahp.Action) uint64 { return t.publishIf(act, nil) }

// publishIf is publish when ok (called with the AHP lock held) allows it;
// it returns the sequence number it published the action with, 0 when ok
// refused.
func (t *Terminal) publishIf(act ahp.Action, ok func(*ahp.TerminalState) bool) uint64 {
	a := &t.live
	a.mu.Lock()
	if ok != nil && !ok(&a.state) {
		a.mu.Unlock()
		return 0
	}
	if d, ok := act.(ahp.DataAction); ok {
		a.dataLocked([]byte(d.Data))
	} else {
		a.state.Apply(act)
		a.syncPartsLocked()
	}
	a.seq++
	seq := a.seq
	if a.subs > 0 {
		a.log.add(SeqAction{Seq: seq, Action: act})
	}
	listed := false
	switch act.(type) {
	case ahp.ClaimedAction:
		if a.claimed != nil {
			close(a.claimed)
			a.claimed = nil
		}
		listed = true
	case ahp.TitleChangedAction, ahp.ExitedAction:
		listed = true
	}
	a.wakeLocked()
	a.mu.Unlock()
	if listed {
		t.host.listingChanged()
	}
	return seq
}

// wakeLocked wakes the subscribers waiting for an action.
func (a *liveState) wakeLocked() {
	if a.changed != nil {
		close(a.changed)
		a.changed = nil
	}
}

// recordExit records the exit in the state (read loop, before Done).
func (t *Terminal) recordExit(st ExitStatus) {
	t.flushPartial()
	t.publish(ahp.ExitedAction{Terminal: t.live.uri, ExitCode: st.codeCopy(), ExitSignal: st.Signal})
}

// URI returns the terminal's AHP resource URI (TerminalURI of its id).
func (t *Terminal) URI() string { return t.live.uri }

// State returns a copy of the terminal's AHP state: title, cwd, size,
// claim, exit, content parts (the newest output, bounded) and whether
// the shell reports command boundaries. It keeps answering after Release.
func (t *Terminal) State() ahp.TerminalState {
	a := &t.live
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.snapshotLocked(0, true)
}

// StateSummary is State without the parts' text and with only the newest
// n parts (all when n <= 0): the metadata and the recent commands' lines
// and exit codes, without copying output.
func (t *Terminal) StateSummary(n int) ahp.TerminalState {
	a := &t.live
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.snapshotLocked(n, false)
}

// Claims is who holds a terminal (its AHP claim: a session's tool call,
// a session in the background, or a client) and the ways to change it.
type Claims struct{ t *Terminal }

// Claims returns the terminal's claim, to read, watch and change it.
func (t *Terminal) Claims() Claims { return Claims{t} }

// Holder returns who holds the terminal.
func (c Claims) Holder() ahp.Claim {
	h, _ := c.Watch()
	return h
}

// Watch returns who holds the terminal and a channel closed when the
// claim next changes.
func (c Claims) Watch() (ahp.Claim, <-chan struct{}) {
	a := &c.t.live
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.claimed == nil {
		a.claimed = make(chan struct{})
	}
	return a.state.Claim, a.claimed
}

// Set transfers the terminal to a new holder (terminal/claimed). A claim
// equal to the current one changes nothing. It fails for a malformed
// claim and after Release.
func (c Claims) Set(h ahp.Claim) error {
	_, err := c.t.swapClaim(nil, h)
	return err
}

// CompareAndSwap sets the claim to new only if it is old, atomically (so
// a session cannot take back a terminal the user just took over); it
// reports whether the claim is new now.
func (c Claims) CompareAndSwap(old, new ahp.Claim) (bool, error) {
	return c.t.swapClaim(&old, new)
}

// ReleaseUnlessClientHeld releases the terminal (Release) unless a client
// holds it, i.e. the user took it over: then the process runs on and only
// its new holder ends it. It reports whether it released. The check and
// the release are atomic with respect to claim changes.
func (c Claims) ReleaseUnlessClientHeld() bool {
	t := c.t
	a := &t.live
	a.mu.Lock()
	if a.state.Claim.ByClient() {
		a.mu.Unlock()
		return false
	}
	first := t.markReleased()
	a.mu.Unlock()
	if first {
		t.releaseNow()
	}
	return true
}

func (t *Terminal) swapClaim(old *ahp.Claim, c ahp.Claim) (bool, error) {
	if err := c.Validate(); err != nil {
		return false, fmt.Errorf("claim terminal %q: %w", t.id, err)
	}
	var err error
	swapped := 0 != t.publishIf(ahp.ClaimedAction{Terminal: t.live.uri, Claim: c}, func(s *ahp.TerminalState) bool {
		switch {
		case t.Released(): // checked under the AHP lock: see Claims.ReleaseUnlessClientHeld
			err = fmt.Errorf("%w: terminal %q", ErrReleased, t.id)
		case old != nil && s.Claim != *old, s.Claim == c:
		default:
			return true
		}
		return false
	})
	if err != nil {
		return false, err
	}
	return swapped || t.Claims().Holder() == c, nil
}

// Dispatch applies an action a client sends (AHP dispatchAction): input
// goes to the pty (it is not applied or published: its effect comes back
// as terminal/data), resized resizes the pty, claimed and titleChanged
// set the claim and title, cleared empties the content. Other actions are
// the server's own and are refused, as are actions for another terminal.
//
// allow, when set, sees the state first, under the lock that orders the
// terminal's actions, and refuses the action by returning an error (the
// reason a server tells the client: "held by client B"); a claim is
// checked and applied at once, so two clients claiming together cannot
// both win. Dispatch returns the sequence number the action was published
// with (0 for input, and for a claim or title already in place).
func (t *Terminal) Dispatch(act ahp.Action, allow func(ahp.TerminalState) error) (uint64, error) {
	if uri := ahp.ActionTerminal(act); uri != t.live.uri {
		return 0, fmt.Errorf("action %s for %q sent to terminal %q", act.ActionType(), uri, t.live.uri)
	}
	if err := t.usable(); err != nil {
		return 0, err
	}
	check := func() error {
		if allow == nil {
			return nil
		}
		t.live.mu.Lock()
		defer t.live.mu.Unlock()
		return allow(t.live.state)
	}
	// publishChecked publishes when allow agrees, atomically.
	publishChecked := func(a ahp.Action, same func(s *ahp.TerminalState) bool) (uint64, error) {
		var refused error
		seq := t.publishIf(a, func(s *ahp.TerminalState) bool {
			if allow != nil {
				if refused = allow(*s); refused != nil {
					return false
				}
			}
			return !same(s)
		})
		return seq, refused
	}
	switch a := ahp.Deref(act).(type) {
	case ahp.InputAction:
		if err := check(); err != nil {
			return 0, err
		}
		_, err := t.Write([]byte(a.Data))
		return 0, err
	case ahp.ResizedAction:
		if a.Cols <= 0 || a.Rows <= 0 || a.Cols > 0xffff || a.Rows > 0xffff {
			return 0, fmt.Errorf("resize terminal %q: invalid size %dx%d", t.id, a.Cols, a.Rows)
		}
		if err := check(); err != nil {
			return 0, err
		}
		return t.resize(uint16(a.Cols), uint16(a.Rows))
	case ahp.ClaimedAction:
		if err := a.Claim.Validate(); err != nil {
			return 0, fmt.Errorf("claim terminal %q: %w", t.id, err)
		}
		return publishChecked(a, func(s *ahp.TerminalState) bool { return s.Claim == a.Claim })
	case ahp.TitleChangedAction:
		return publishChecked(a, func(s *ahp.TerminalState) bool { return s.Title == a.Title })
	case ahp.ClearedAction:
		return publishChecked(a, func(*ahp.TerminalState) bool { return false })
	}
	return 0, fmt.Errorf("terminal %q: %s is not an action a client may dispatch", t.id, act.ActionType())
}

// LastLine returns the last non-empty line of the newest output as a
// person reads it (rendered, no escape sequences), for a terminal list.
func (t *Terminal) LastLine() string {
	const tail = 4 << 10
	a := &t.live
	a.mu.Lock()
	text := a.tailText(tail)
	a.mu.Unlock()
	st := render.NewStore(tail)
	st.Append([]byte(text))
	st.Flush()
	rendered, _ := st.Snapshot()
	for rendered != "" {
		i := len(rendered) - 1
		for i >= 0 && rendered[i] != '\n' {
			i--
		}
		if line := trimRight(rendered[i+1:]); line != "" {
			return line
		}
		if i < 0 {
			break
		}
		rendered = rendered[:i]
	}
	return ""
}

func trimRight(s string) string {
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
