package terminals

import (
	"fmt"
	"time"
)

// Rerun ("rerun") runs terminal id's command again, as it ran — the same
// program and arguments, working directory, environment, sandbox and
// limits — in a new terminal the user holds, and answers {id, command,
// rerun_of, runs, replaces} (Lua opens its split where the old one was,
// and keeps these as the backend says them): the new
// run keeps the first run's id as its row (rerun_of; the AHP listing's
// runOf, so agentrun ls shows one row) and counts the runs, and the run
// it replaces records it (rerun_as; the listing's replacedBy). id may
// name an older run: the newest is run again. One that still runs is
// restarted in place: stopped first (SIGTERM, SIGKILL after the grace).
// The agent's is taken over first, as T does (the user's now, as the
// README says R makes it): the agent reads its end as a kill, as when X
// stops it. The approval rules are Lua's to apply before it asks.
func (ts *Terminals) Rerun(id string) (map[string]any, error) {
	tm, err := ts.newestRun(id)
	if err != nil {
		return nil, fmt.Errorf("rerun: %w", err)
	}
	id = tm.id
	tm.mu.Lock()
	spec, t, running := tm.spec, tm.t, tm.state == "running" && tm.exit == nil
	tm.mu.Unlock()
	if spec.Command == "" {
		return nil, fmt.Errorf("rerun: terminal %q has no command to run again", id)
	}
	if running && t != nil {
		t.MarkRestarting() // the agent is told why it is taken from it
		if !t.Claims().Holder().ByClient() {
			if err := ts.deps.ClaimForUser(t); err != nil {
				return nil, fmt.Errorf("rerun: taking over %s: %w", id, err)
			}
		}
		if err := t.Kill(); err != nil {
			return nil, fmt.Errorf("rerun: stopping %s: %w", id, err)
		}
		select {
		case <-t.Done():
		case <-time.After(t.KillGrace() + 5*time.Second):
			return nil, fmt.Errorf("rerun: %s did not stop", id)
		}
	}
	spec.ID, spec.Nonce, spec.Claim, spec.Title = "", "", ts.user, tm.command
	if spec.RunOf == "" {
		spec.RunOf, spec.Run = id, 1
	}
	spec.Run++
	spec.Cols, spec.Rows = ts.Size()
	if ts.deps.Closing() {
		return nil, fmt.Errorf("rerun: shutting down")
	}
	nt, err := ts.deps.Host().Create(ts.ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("rerun %s: %w", id, err)
	}
	tm.mu.Lock()
	tm.rerunAs = nt.ID()
	if tm.t != nil {
		tm.t.SetReplacedBy(nt.ID())
	}
	tm.mu.Unlock()
	ts.Add(nt, "", "", true)
	ts.log.Info("terminal run again", "terminal", nt.ID(), "from", id, "run", spec.Run, "cwd", spec.Dir)
	return map[string]any{"id": nt.ID(), "command": tm.command, "rerun_of": spec.RunOf, "runs": spec.Run, "replaces": id}, nil
}

// newestRun returns terminal id's newest run: id itself, or the run
// that ran its command again last (rerun_as, followed).
func (ts *Terminals) newestRun(id string) (*terminal, error) {
	tm, err := ts.lookup(id)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{id: true}
	for {
		tm.mu.Lock()
		next := tm.rerunAs
		tm.mu.Unlock()
		if next == "" || seen[next] {
			return tm, nil
		}
		seen[next] = true
		nt, err := ts.lookup(next)
		if err != nil {
			return tm, nil //nolint:nilerr // the newer run is gone from here: this one is the newest left
		}
		tm = nt
	}
}
