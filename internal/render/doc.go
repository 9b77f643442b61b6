// Package render turns what a program prints into the text a person
// reads: the form an agent gets from terminal/output.
//
// Store is that text: a Scanner splits the
// stream into text, controls and sequences, and the Store renders a
// person's view of it: no escape sequences or colours, "\r" redraws
// collapsed to the final state of the line, "\r\n" as "\n", backspace,
// erase-in-line and cursor moves within a line applied, invalid UTF-8 as
// U+FFFD (also across Append calls). It keeps the tail within the byte
// limit, cut at a character boundary, and reports Truncated once anything
// was dropped. Committed lines and the current line live in one buffer;
// appending at the end of a line (almost all output) is a bulk copy, and
// the committed text is cut back to the limit when it reaches the limit
// plus max(limit/2, 64 KiB), so memory stays about 1.5× the limit.
// The current line is bounded too (limit + 4 KiB, trimmed lazily while it
// only grows); the exact guarantee is on Store.
//
// AppendJSON gives the same text as a JSON string, the form terminal/output
// sends. Committed lines never change, so once a Store has been asked
// twice for a big text it keeps their escaped form, extended as lines are
// committed and cut with compaction, with checkpoints every 4 KiB: an
// agent polling a MiB of output then costs a copy of that form (about
// 60 µs) instead of an encoding (about 0.9 ms), and a Store read once
// holds no copy. Under the Store's lock AppendJSON only copies raw text;
// the escaping happens after, so Append never waits for more than a copy
// (store_json.go).
package render
