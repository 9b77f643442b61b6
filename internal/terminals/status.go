package terminals

import "github.com/agentrun/agentrun.nvim/internal/event"

// Status is every terminal's entry in status(), oldest first.
func (ts *Terminals) Status() []any {
	ts.mu.Lock()
	terms := make([]*terminal, 0, len(ts.order))
	for _, id := range ts.order {
		terms = append(terms, ts.byID[id])
	}
	ts.mu.Unlock()
	list := make([]any, 0, len(terms))
	for _, tm := range terms {
		list = append(list, tm.status())
	}
	return list
}

// Status is one terminal's entry in status().
func (tm *terminal) status() map[string]any {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	bytes, truncated := tm.bytes, tm.truncated
	if tm.t != nil {
		bytes, truncated = tm.t.BytesSeen(), tm.t.Truncated()
	}
	m := map[string]any{
		"id":          tm.id,
		"session":     tm.sid,
		"key":         tm.key,
		"command":     tm.command,
		"state":       tm.state,
		"bytes":       bytes,
		"truncated":   truncated,
		"attached":    tm.pump != nil,
		"sandbox":     tm.sandbox,
		"output_kept": tm.t != nil,
		"waiting":     tm.waiting,
		"ports":       append([]int{}, tm.ports...),
	}
	tm.ahpStatus(m)               // claim, title, cwd, size, commands (userterm.go)
	if _, ok := m["claim"]; !ok { // no AHP state yet
		m["claim"] = event.Claim(tm.claim)
	}
	if _, ok := m["cwd"]; !ok {
		m["cwd"] = tm.cwd
	}
	// R ran it again: the row it takes (the first run's id), which run
	// it is, and the newer run that took its place
	if tm.spec.RunOf != "" {
		m["rerun_of"], m["runs"] = tm.spec.RunOf, tm.spec.Run
	}
	if tm.rerunAs != "" {
		m["rerun_as"] = tm.rerunAs
	}
	if tm.limit != "" {
		m["stopped_by_limit"] = tm.limit
	}
	if tm.exit != nil {
		if tm.exit.Code != nil {
			m["exit_code"] = *tm.exit.Code
		} else {
			m["signal"] = tm.exit.Signal
		}
	}
	return m
}
