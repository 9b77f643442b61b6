package ahp

// The pure reducers the AHP fixtures are written against (fixtures_test.go):
// the code applies actions in place (TerminalState.Apply) or replaces the
// listing whole (root/terminalsChanged); these say the same without
// changing their input.

// Reduce returns the state after action a, leaving s unchanged. It is the
// AHP terminal reducer: pure, no I/O; unknown action types (and root
// actions) return s unchanged.
func Reduce(s TerminalState, a Action) TerminalState {
	c := s.Clone()
	c.Apply(a)
	return c
}

// ReduceRoot returns the root state after action a, leaving s unchanged:
// root/terminalsChanged replaces the listing whole; other actions return s.
func ReduceRoot(s RootState, a Action) RootState {
	if a, ok := Deref(a).(RootTerminalsChangedAction); ok {
		s.Terminals = make([]TerminalInfo, len(a.Terminals))
		for i, t := range a.Terminals {
			t.ExitCode = copyPtr(t.ExitCode)
			s.Terminals[i] = t
		}
	}
	return s
}
