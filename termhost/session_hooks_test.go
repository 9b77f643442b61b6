package termhost

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/procstat"
)

// sessionLog records the session hooks' calls.
type sessionLog struct {
	mu      sync.Mutex
	started []int
	ended   []int
	// aliveAtEnd lists the sessions that still had a live process when
	// SessionEnded was called for them.
	aliveAtEnd []int
}

func (l *sessionLog) options() Options {
	return Options{
		KillGrace: 300 * time.Millisecond,
		SessionStarted: func(pid int, _ string) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.started = append(l.started, pid)
		},
		SessionEnded: func(pid int) {
			groups, err := procstat.Tree{Leader: pid}.Groups()
			alive := err != nil || len(groups) > 0
			l.mu.Lock()
			defer l.mu.Unlock()
			l.ended = append(l.ended, pid)
			if alive {
				l.aliveAtEnd = append(l.aliveAtEnd, pid)
			}
		},
	}
}

func (l *sessionLog) get() (started, ended, aliveAtEnd []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.started), slices.Clone(l.ended), slices.Clone(l.aliveAtEnd)
}

// TestSessionHooks: SessionStarted comes with Create, SessionEnded once
// per terminal after its release, when nothing of its session is left
// (here a background child that ignores SIGTERM, ended by the SIGKILL
// after the grace). A terminal whose command exited but that was not
// released stays started; Host.Close ends it.
func TestSessionHooks(t *testing.T) {
	var l sessionLog
	h := testHost(t, l.options())
	stubborn := create(t, h, shell(t, "trap '' TERM; sleep 1000 & echo ready; wait"))
	waitOutput(t, stubborn, "ready")
	exited := create(t, h, shell(t, "true"))
	waitExit(t, exited)
	started, ended, _ := l.get()
	if want := []int{stubborn.Pid(), exited.Pid()}; !slices.Equal(started, want) {
		t.Fatalf("started %v, want %v", started, want)
	}
	if len(ended) != 0 {
		t.Fatalf("ended %v before any release", ended)
	}

	stubborn.Release()
	stubborn.Release()
	eventually(t, "the released terminal's session to end", func() bool {
		_, ended, _ := l.get()
		return len(ended) > 0
	})
	_, ended, alive := l.get()
	if !slices.Equal(ended, []int{stubborn.Pid()}) || len(alive) != 0 {
		t.Fatalf("ended %v (with live processes: %v), want only %d, with none", ended, alive, stubborn.Pid())
	}

	h.Close()
	eventually(t, "Close to end the exited terminal's session", func() bool {
		_, ended, _ := l.get()
		return len(ended) == 2
	})
	_, ended, alive = l.get()
	if !slices.Equal(ended, []int{stubborn.Pid(), exited.Pid()}) || len(alive) != 0 {
		t.Fatalf("ended %v (with live processes: %v)", ended, alive)
	}
}
