// Package ahp is the Agent Host Protocol's terminal model: a terminal's
// state and the actions that change it, the root listing, claims, and the
// URIs that name terminals and directories. It knows nothing of ptys,
// processes or ACP; termhost keeps one live state per terminal with it,
// and a client follows a terminal by applying the actions it receives.
//
// A terminal's observable state (TerminalState: title, cwd, size, claim,
// exit, content parts, supportsCommandDetection) changes only through
// actions, applied by one reducer. The types and JSON field names are
// AHP's (reference/ahp/schema/state.schema.json and actions.schema.json),
// so the AHP reducer fixtures load directly and a socket server can
// send snapshots and actions unchanged.
//
//   - TerminalState.Apply is the reducer, working in place, for the owner
//     of a state (the Terminal, under its lock; a client following one).
//     Clone + Apply is the pure reducer the AHP fixtures describe (their
//     test's Reduce), so both share one implementation of the semantics.
//   - terminal/data appends to the tail part. Go strings are immutable,
//     so a naive s += data would copy the whole part on every pty read;
//     appendText (text.go) keeps spare capacity behind each part's
//     text and appends in place when no other state has appended there.
//   - Content is unbounded in the reducer (the fixtures are exact).
//     Bounding is a separate step, Trim (trim.go), for whoever
//     reduces actions (a client); AHP allows either side to trim. A live
//     Terminal keeps its parts' text in a bounded ring instead
//     (termhost's content.go) and builds strings only when asked.
//   - Extensions to AHP, ignored by other AHP peers: exitSignal on
//     terminal/exited, TerminalState and TerminalInfo (a death by signal
//     has no exitCode, and a UI must still show that the process ended).
//   - The root listing (RootState.Terminals) is replaced whole by
//     root/terminalsChanged.
package ahp
