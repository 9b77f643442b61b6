package render

import (
	"strings"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/jsonstr"
)

// TestStorePlainLines: the fast path for plain lines (Store.plainLines)
// renders exactly what the reference renderer does, wherever the input is
// split between Appends: line ends split between "\r" and "\n", lines
// after a redraw or an escape, non-ASCII text, lines trimmed to the line
// cap and compactions.
func TestStorePlainLines(t *testing.T) {
	inputs := []string{
		"one\r\ntwo\nthree\r\n",
		"ab\r\ncd\n\x1b[31mred\x1b[0m\r\nplain again\r\n",
		"progress 10%\rprogress 100%\r\nnext\n",
		"abc\rX\nafter\n",
		"tab\there\n\x7fdel\n\n\n",
		"é caf\xc3\xa9\r\nascii\r\n\xe2\x82\xac\n",
		"split \xe2\x82",
		strings.Repeat("0123456789", 12) + "\r\n" + strings.Repeat("x", 300) + "\n" + "short\n",
		"a\x1b]0;title\x07b\r\nc\n",
		"no end yet",
		"\r\n\r\n\n",
		"abc\x1b[2D\r\ndone\n",
	}
	for _, in := range inputs {
		for _, limit := range []int{8, 50, 1 << 10} {
			lineCap := limit + 4
			full, trimmed := refRender([]byte(in), lineCap)
			want := refTail(full, limit)
			wantTruncated := trimmed || len(full) > limit
			for split := 0; split <= len(in); split++ {
				s := NewStore(limit)
				s.lineCap = lineCap
				s.compactAt = limit + 3
				s.Append([]byte(in[:split]))
				s.Append([]byte(in[split:]))
				s.Flush()
				if got, truncated := s.Snapshot(); got != want || truncated != wantTruncated {
					t.Fatalf("%q split at %d, limit %d:\n got %q truncated=%v\nwant %q truncated=%v",
						in, split, limit, got, truncated, want, wantTruncated)
				}
				wantJSON := "prefix:" + string(jsonstr.AppendString(nil, []byte(want)))
				if got, truncated := s.AppendJSON([]byte("prefix:")); string(got) != wantJSON || truncated != wantTruncated {
					t.Fatalf("%q split at %d, limit %d: AppendJSON = %s truncated=%v, want %s truncated=%v",
						in, split, limit, got, truncated, wantJSON, wantTruncated)
				}
			}
		}
	}
}
