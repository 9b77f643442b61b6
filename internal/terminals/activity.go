package terminals

import (
	"slices"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// activityEvery is how often a running terminal is looked at for the two
// things a user acts on (activity): whether it waits for input, and the
// ports it listens on (every second look: it reads every process's fds).
const activityEvery = time.Second

// watchActivity follows terminal t while it runs: an agent's command that
// printed nothing for a look and whose foreground process group reads
// the terminal waits for input (the user's own shells always do at their
// prompt: not said); the TCP ports its processes listen on (a dev
// server's). Each change is an event terminal_activity {id, waiting,
// ports, last_line: its last line while it waits} and is kept for
// status().
func (ts *Terminals) watchActivity(tm *terminal, t *termhost.Terminal) {
	tick := time.NewTicker(activityEvery)
	defer tick.Stop()
	last := t.BytesSeen()
	for n := 0; ; n++ {
		select {
		case <-tick.C:
		case <-t.Done():
			// no event: its terminal_exit says it no longer waits nor
			// listens (one before it would read as an answer)
			tm.mu.Lock()
			tm.waiting, tm.ports = false, nil
			tm.mu.Unlock()
			return
		case <-tm.released:
			return
		case <-ts.ctx.Done():
			return
		}
		seen := t.BytesSeen()
		waiting := !tm.user && seen == last && t.ReadsInput()
		last = seen
		tm.mu.Lock()
		ports := tm.ports
		tm.mu.Unlock()
		if n%2 == 1 {
			ports = t.Ports()
		}
		prompt := ""
		if waiting {
			prompt = event.LastLine(t.Output().Text) // what it asks, most often
		}
		ts.setActivity(tm, waiting, ports, prompt)
	}
}

// setActivity records what watchActivity saw and tells Lua when it
// changed.
func (ts *Terminals) setActivity(tm *terminal, waiting bool, ports []int, lastLine string) {
	tm.mu.Lock()
	same := tm.waiting == waiting && slices.Equal(tm.ports, ports)
	tm.waiting, tm.ports = waiting, ports
	tm.mu.Unlock()
	if same {
		return
	}
	if ports == nil {
		ports = []int{}
	}
	ts.events.Push(event.TerminalActivity{ID: tm.id, Waiting: waiting, Ports: ports, LastLine: lastLine})
}
