package termhost

import (
	"context"
	"fmt"
	"io"

	"github.com/agentrun/agentrun.nvim/ahp"
)

// Action log bounds: a subscriber further behind than this gets a fresh
// snapshot instead of the actions it missed.
const (
	actionLogMax      = 4096
	actionLogMaxBytes = 1 << 20
)

// SeqAction is one action of a terminal's stream with its sequence
// number: 1 for the first action applied to the terminal's initial
// state, one more for each after it.
type SeqAction struct {
	Seq    uint64
	Action ahp.Action
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

func dataLen(a ahp.Action) int {
	if d, ok := a.(ahp.DataAction); ok {
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
func (t *Terminal) Subscribe() (ahp.TerminalState, *Subscription) {
	a := &t.live
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
func (s *Subscription) Next(ctx context.Context) (acts []SeqAction, resync *ahp.TerminalState, err error) {
	a := &s.t.live
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
	a := &s.t.live
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
