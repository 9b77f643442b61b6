// Package rawlog keeps a terminal's raw output (escape sequences and all)
// for a display that reads at its own pace.
//
// Log keeps the newest bytes (its size; termhost's Options.DisplayBytes), offsets counting
// every byte ever printed. A display reads at its own pace; when it falls
// behind further than the log keeps, or further than it wants to draw
// (maxLines), Read skips ahead to a line boundary and says so (Skipped),
// so the display shows the tail exactly and never slows the command. The
// log counts newlines as they are appended; a Reader (one per display)
// counts what it read, so "how many lines behind" costs nothing to ask
// before every read, and it reuses one buffer for its chunks.
package rawlog
