package demoagent

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestCancelInWireOrder: a session/cancel cancels the prompt read before
// it, even when the prompt's handler starts after the cancel was handled
// (the SDK runs them in different goroutines), and never a prompt read
// after it (a cancel that crossed the previous turn's answer).
func TestCancelInWireOrder(t *testing.T) {
	prompt := `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`
	cancel := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`
	for _, c := range []struct {
		name      string
		steps     []string // "prompt", "cancel", "start", "end"
		cancelled []bool   // per turn started, whether its ctx is cancelled at the end
	}{
		{"cancel handled before the handler starts", []string{"prompt", "cancel", "start"}, []bool{true}},
		{"cancel while the turn runs", []string{"prompt", "start", "cancel"}, []bool{true}},
		{"no cancel", []string{"prompt", "start"}, []bool{false}},
		{"a late cancel does not reach the next turn", []string{"prompt", "start", "end", "cancel", "prompt", "start"}, []bool{true, false}},
		{"another session's cancel", []string{"prompt", "other-cancel", "start"}, []bool{false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWireOrder()
			var lines []string
			var ctxs []context.Context
			var dones []func()
			id := 0
			feed := func(line string) {
				r := w.reader(strings.NewReader(line + "\n"))
				if _, err := io.ReadAll(r); err != nil {
					t.Fatal(err)
				}
				lines = append(lines, line)
			}
			for _, st := range c.steps {
				switch st {
				case "prompt":
					id++
					feed(strings.Replace(prompt, "%d", string(rune('0'+id)), 1))
				case "cancel":
					feed(cancel)
				case "other-cancel":
					feed(strings.Replace(cancel, "s1", "s2", 1))
				case "start":
					ctx, done := w.turn(context.Background(), "s1")
					ctxs = append(ctxs, ctx)
					dones = append(dones, done)
				case "end":
					dones[len(dones)-1]()
				}
			}
			for i, want := range c.cancelled {
				if got := ctxs[i].Err() != nil; got != want {
					t.Errorf("turn %d cancelled %v, want %v (lines %q)", i+1, got, want, lines)
				}
			}
		})
	}
}
