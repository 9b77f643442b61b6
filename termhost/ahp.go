package termhost

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"
)

// The AHP wiring of a terminal (see doc.go, "AHP state and actions"): the
// read loop's bytes go through an OSCFilter, which cuts shell integration
// markers out and hands every OSC payload over in stream order. What it
// passes on goes to the raw log, the Store and the state's content
// (terminal/data); each payload goes to the ShellIntegration, whose
// actions are applied in the same order. Every action applied gets the
// next sequence number; subscribers read them from a bounded log.

// Action log bounds: a subscriber further behind than this gets a fresh
// snapshot instead of the actions it missed.
const (
	actionLogMax      = 4096
	actionLogMaxBytes = 1 << 20
)

// ahpTerminal is one terminal's AHP state, its shell integration and its
// action stream.
type ahpTerminal struct {
	uri string // TerminalURI(id), put on every action

	// Owned by the read loop.
	filter  OSCFilter
	si      *ShellIntegration
	partial [utf8.UTFMax]byte // an incomplete UTF-8 character held back
	npart   int
	out     func([]byte) // the read loop's callbacks, made once
	osc     func([]byte)

	mu      sync.Mutex
	state   TerminalState // the parts' text lives in text (ahp_content.go)
	text    contentRing
	starts  []int64 // where each part's text starts in the stream
	limits  ContentLimits
	seq     uint64 // of the last action applied
	log     actionLog
	subs    int           // open subscriptions; the log is kept only while > 0
	changed chan struct{} // closed at the next action; nil until someone waits
	claimed chan struct{} // closed at the next claim change; nil until someone waits
}

// initAHP sets up t's AHP state from its spec; nonce is the shell
// integration secret ("" trusts no command line).
func (t *Terminal) initAHP(nonce string) {
	a := &t.ahp
	a.uri = TerminalURI(t.id)
	a.si = NewShellIntegration(a.uri, nonce)
	a.out = t.ahpData
	a.osc = t.ahpOSC
	a.text.size = a.limits.MaxBytes
	if a.text.size <= 0 {
		a.text.size = DefaultContentBytes
	}
	a.state = TerminalState{
		Title:   t.spec.Title,
		Cwd:     FileURI(t.spec.Dir),
		Cols:    int(t.spec.Cols),
		Rows:    int(t.spec.Rows),
		Content: []ContentPart{},
		Claim:   t.spec.Claim,
	}
}

// ahpFeed takes one read from the pty (read loop only).
func (t *Terminal) ahpFeed(p []byte) {
	t.ahp.filter.Feed(p, t.ahp.out, t.ahp.osc)
}

// ahpFlush passes on what the filter still holds at the end of the
// stream, and the incomplete character held back (read loop only).
func (t *Terminal) ahpFlush() {
	t.ahp.filter.Flush(t.ahp.out)
	t.ahpFlushPartial()
}

// ahpData receives the bytes the filter passes on: the display, the
// agent's text and the state's content get the same bytes. An incomplete
// UTF-8 character at the end waits for the next read, so every
// terminal/data is whole characters (it travels as a JSON string).
func (t *Terminal) ahpData(d []byte) {
	t.raw.Append(d)
	t.store.Append(d)
	a := &t.ahp
	b := d
	if a.npart > 0 {
		// A character split across reads (rare): join the two.
		b = append(a.partial[:a.npart:a.npart], d...)
		a.npart = 0
	}
	keep := incompleteTail(b)
	if keep > 0 {
		a.npart = copy(a.partial[:], b[len(b)-keep:])
		b = b[:len(b)-keep]
	}
	t.ahpApplyData(b)
}

// ahpFlushPartial applies a held-back incomplete character as it is
// (something other than its continuation came: it is invalid anyway).
func (t *Terminal) ahpFlushPartial() {
	a := &t.ahp
	if a.npart == 0 {
		return
	}
	b := append([]byte(nil), a.partial[:a.npart]...)
	a.npart = 0
	t.ahpApplyData(b)
}

// incompleteTail returns how many bytes at the end of b are the start of
// a UTF-8 character that is not complete yet.
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
}

// ahpApplyData applies terminal/data. While no one subscribes it costs
// one copy of b into the content ring and no allocation; a subscriber's
// action gets its own copy.
func (t *Terminal) ahpApplyData(b []byte) {
	if len(b) == 0 {
		return
	}
	a := &t.ahp
	a.mu.Lock()
	a.dataLocked(b)
	a.seq++
	if a.subs > 0 {
		a.log.add(SeqAction{Seq: a.seq, Action: DataAction{Terminal: a.uri, Data: string(b)}})
	}
	a.wakeLocked()
	a.mu.Unlock()
}

// ahpOSC receives every OSC payload in stream order, after everything
// printed before it was passed on: shell integration turns it into
// actions, then the OSC observers see it.
func (t *Terminal) ahpOSC(p []byte) {
	acts := t.ahp.si.HandleOSC(p, time.Now())
	if len(acts) > 0 {
		t.ahpFlushPartial()
		for _, act := range acts {
			t.publish(act)
		}
	}
	for _, fn := range t.hooks.osc {
		fn(p)
	}
	if fn := t.host.opts.OnOSC; fn != nil {
		fn(t, p)
	}
}

// publish applies a (not terminal/data) to the state, gives it the next
// sequence number and wakes whoever waits for it; a change the root
// listing shows (title, claim, exit) updates the listing.
func (t *Terminal) publish(act Action) { t.publishIf(act, nil) }

// publishIf is publish when ok (called with the AHP lock held) allows it;
// it reports whether it published.
func (t *Terminal) publishIf(act Action, ok func(*TerminalState) bool) bool {
	a := &t.ahp
	a.mu.Lock()
	if ok != nil && !ok(&a.state) {
		a.mu.Unlock()
		return false
	}
	if d, ok := act.(DataAction); ok {
		a.dataLocked([]byte(d.Data))
	} else {
		a.state.Apply(act)
		a.syncPartsLocked()
	}
	a.seq++
	if a.subs > 0 {
		a.log.add(SeqAction{Seq: a.seq, Action: act})
	}
	listed := false
	switch act.(type) {
	case ClaimedAction:
		if a.claimed != nil {
			close(a.claimed)
			a.claimed = nil
		}
		listed = true
	case TitleChangedAction, ExitedAction:
		listed = true
	}
	a.wakeLocked()
	a.mu.Unlock()
	if listed {
		t.host.listingChanged()
	}
	return true
}

// wakeLocked wakes the subscribers waiting for an action.
func (a *ahpTerminal) wakeLocked() {
	if a.changed != nil {
		close(a.changed)
		a.changed = nil
	}
}

// ahpExited records the exit in the state (read loop, before Done).
func (t *Terminal) ahpExited(st ExitStatus) {
	t.ahpFlushPartial()
	t.publish(ExitedAction{Terminal: t.ahp.uri, ExitCode: copyPtr(st.Code), ExitSignal: st.Signal})
}

// ahpResized records a new pty size.
func (t *Terminal) ahpResized(cols, rows uint16) {
	t.publish(ResizedAction{Terminal: t.ahp.uri, Cols: int(cols), Rows: int(rows)})
}

// URI returns the terminal's AHP resource URI (TerminalURI of its id).
func (t *Terminal) URI() string { return t.ahp.uri }

// State returns a copy of the terminal's AHP state: title, cwd, size,
// claim, exit, content parts (the newest output, bounded) and whether
// the shell reports command boundaries. It keeps answering after Release.
func (t *Terminal) State() TerminalState {
	a := &t.ahp
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.snapshotLocked(0, true)
}

// StateSummary is State without the parts' text and with only the newest
// n parts (all when n <= 0): the metadata and the recent commands' lines
// and exit codes, without copying output.
func (t *Terminal) StateSummary(n int) TerminalState {
	a := &t.ahp
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.snapshotLocked(n, false)
}

// Claim returns who holds the terminal.
func (t *Terminal) Claim() Claim {
	c, _ := t.WatchClaim()
	return c
}

// WatchClaim returns who holds the terminal and a channel closed when the
// claim next changes.
func (t *Terminal) WatchClaim() (Claim, <-chan struct{}) {
	a := &t.ahp
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.claimed == nil {
		a.claimed = make(chan struct{})
	}
	return a.state.Claim, a.claimed
}

// SetClaim transfers the terminal to a new holder (terminal/claimed): a
// session's tool call, a session in the background, or a client (the
// user). A claim equal to the current one changes nothing. It fails for
// a malformed claim and after Release.
func (t *Terminal) SetClaim(c Claim) error {
	_, err := t.swapClaim(nil, c)
	return err
}

// CompareAndSwapClaim sets the claim to new only if it is old, atomically
// (so a session cannot take back a terminal the user just took over); it
// reports whether the claim is new now.
func (t *Terminal) CompareAndSwapClaim(old, new Claim) (bool, error) {
	return t.swapClaim(&old, new)
}

func (t *Terminal) swapClaim(old *Claim, c Claim) (bool, error) {
	if err := c.Validate(); err != nil {
		return false, fmt.Errorf("claim terminal %q: %w", t.id, err)
	}
	var err error
	swapped := t.publishIf(ClaimedAction{Terminal: t.ahp.uri, Claim: c}, func(s *TerminalState) bool {
		switch {
		case t.Released(): // checked under the AHP lock: see ReleaseUnlessClientHeld
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
	return swapped || t.Claim() == c, nil
}

// ReleaseUnlessClientHeld releases the terminal (Release) unless a client
// holds it, i.e. the user took it over: then the process runs on and only
// its new holder ends it. It reports whether it released. The check and
// the release are atomic with respect to claim changes.
func (t *Terminal) ReleaseUnlessClientHeld() bool {
	a := &t.ahp
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

// SetTitle renames the terminal (terminal/titleChanged).
func (t *Terminal) SetTitle(title string) error {
	if err := t.usable(); err != nil {
		return err
	}
	t.publish(TitleChangedAction{Terminal: t.ahp.uri, Title: title})
	return nil
}

// Dispatch applies an action a client sends (AHP dispatchAction): input
// goes to the pty (it is not applied or published: its effect comes back
// as terminal/data), resized resizes the pty, claimed and titleChanged
// set the claim and title, cleared empties the content. Other actions are
// the server's own and are refused, as are actions for another terminal.
func (t *Terminal) Dispatch(act Action) error {
	if uri := ActionTerminal(act); uri != t.ahp.uri {
		return fmt.Errorf("action %s for %q sent to terminal %q", act.ActionType(), uri, t.ahp.uri)
	}
	switch a := derefAction(act).(type) {
	case InputAction:
		_, err := t.Write([]byte(a.Data))
		return err
	case ResizedAction:
		if a.Cols <= 0 || a.Rows <= 0 || a.Cols > 0xffff || a.Rows > 0xffff {
			return fmt.Errorf("resize terminal %q: invalid size %dx%d", t.id, a.Cols, a.Rows)
		}
		return t.Resize(uint16(a.Cols), uint16(a.Rows))
	case ClaimedAction:
		return t.SetClaim(a.Claim)
	case TitleChangedAction:
		return t.SetTitle(a.Title)
	case ClearedAction:
		if err := t.usable(); err != nil {
			return err
		}
		t.publish(a)
		return nil
	}
	return fmt.Errorf("terminal %q: %s is not an action a client may dispatch", t.id, act.ActionType())
}

// LastLine returns the last non-empty line of the newest output as a
// person reads it (rendered, no escape sequences), for a terminal list.
func (t *Terminal) LastLine() string {
	const tail = 4 << 10
	a := &t.ahp
	a.mu.Lock()
	text := a.tailText(tail)
	a.mu.Unlock()
	st := NewStore(tail)
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

// SeqAction is one action of a terminal's stream with its sequence
// number: 1 for the first action applied to the terminal's initial
// state, one more for each after it.
type SeqAction struct {
	Seq    uint64
	Action Action
}

// actionLog keeps the newest actions for subscribers, bounded in number
// and in data bytes.
type actionLog struct {
	items []SeqAction // oldest first, consecutive sequence numbers
	bytes int
}

func (l *actionLog) add(sa SeqAction) {
	l.items = append(l.items, sa)
	l.bytes += dataLen(sa.Action)
	for len(l.items) > 1 && (len(l.items) > actionLogMax || l.bytes > actionLogMaxBytes) {
		l.bytes -= dataLen(l.items[0].Action)
		l.items[0] = SeqAction{}
		l.items = l.items[1:]
	}
}

func dataLen(a Action) int {
	if d, ok := a.(DataAction); ok {
		return len(d.Data)
	}
	return 0
}

// first returns the oldest sequence number kept (0 when empty).
func (l *actionLog) first() uint64 {
	if len(l.items) == 0 {
		return 0
	}
	return l.items[0].Seq
}

// Subscription reads one terminal's action stream in order. Its owner
// calls Next from one goroutine and Close when done.
type Subscription struct {
	t      *Terminal
	next   uint64 // sequence number of the next action to return
	closed bool
}

// Subscribe returns the terminal's current state and a subscription to
// every action applied after it. Applying the actions in order to the
// state (TerminalState.Apply) follows the terminal exactly, up to content
// trimming (both sides may trim). Close the subscription when done: while
// any is open the terminal keeps a bounded log of recent actions.
func (t *Terminal) Subscribe() (TerminalState, *Subscription) {
	a := &t.ahp
	a.mu.Lock()
	defer a.mu.Unlock()
	a.subs++
	return a.snapshotLocked(0, true), &Subscription{t: t, next: a.seq + 1}
}

// Next returns the actions applied since the last call (or since the
// snapshot), waiting until there is at least one. When the subscriber fell
// so far behind that the log no longer holds what it missed, Next returns
// resync instead: a fresh state to replace the subscriber's, which the
// following calls continue from. It returns io.EOF once the terminal is
// released and cleaned up and every action was read, and ctx's error when
// ctx ends first.
func (s *Subscription) Next(ctx context.Context) (acts []SeqAction, resync *TerminalState, err error) {
	a := &s.t.ahp
	for {
		a.mu.Lock()
		if s.closed {
			a.mu.Unlock()
			return nil, nil, fmt.Errorf("terminal %q: subscription closed", s.t.id)
		}
		if s.next <= a.seq {
			first := a.log.first()
			if first == 0 || s.next < first {
				st := a.snapshotLocked(0, true)
				s.next = a.seq + 1
				a.mu.Unlock()
				return nil, &st, nil
			}
			acts = append([]SeqAction(nil), a.log.items[s.next-first:]...)
			s.next = a.seq + 1
			a.mu.Unlock()
			return acts, nil, nil
		}
		if a.changed == nil {
			a.changed = make(chan struct{})
		}
		ch := a.changed
		a.mu.Unlock()
		select {
		case <-ch:
		case <-s.t.gone:
			a.mu.Lock()
			ended := s.next > a.seq
			a.mu.Unlock()
			if ended {
				return nil, nil, io.EOF
			}
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// Close ends the subscription; Next fails afterwards.
func (s *Subscription) Close() {
	a := &s.t.ahp
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	a.subs--
	if a.subs == 0 {
		a.log = actionLog{}
	}
}
