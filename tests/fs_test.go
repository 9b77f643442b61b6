package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// loadBuffer loads path into a (hidden) buffer and returns its number.
func (e *editor) loadBuffer(path string) int {
	e.t.Helper()
	var buf int
	e.lua(`local b = vim.fn.bufadd(...); vim.fn.bufload(b); return b`, &buf, path)
	return buf
}

func TestFsReadPrefersUnsavedBuffer(t *testing.T) {
	tests := []struct {
		name    string
		loaded  bool
		edit    []string // unsaved buffer lines, when loaded
		want    string
		notWant string
	}{
		{"unsaved buffer", true, []string{"buffer version", "second line"}, "buffer version\nsecond line", "disk version"},
		{"no buffer", false, nil, "disk version", "buffer version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, "")
			path := filepath.Join(e.dir, "note.txt")
			if err := os.WriteFile(path, []byte("disk version\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.loaded {
				buf := e.loadBuffer(path)
				e.lua(`local b, lines = ...; vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)`, nil, buf, tc.edit)
			}
			e.startSession()
			e.cmd("AgentPrompt !read " + path)
			chat := e.waitChat(tc.want, 10*time.Second)
			if strings.Contains(chat, tc.notWant) {
				t.Errorf("chat shows %q:\n%s", tc.notWant, chat)
			}
		})
	}
}

func TestFsWriteThroughBufferKeepsUndo(t *testing.T) {
	tests := []struct {
		name      string
		userEdit  string // an unsaved change the user made first ("" = none)
		wantDisk  string // the file afterwards
		wantSaved bool
	}{
		// An unmodified buffer is written to disk with the agent's text.
		// (One with unsaved edits is not written into at all:
		// TestFsWriteIntoUnsavedBufferKeepsTheUsersText.)
		{"unmodified buffer", "", "agent line\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, "")
			path := filepath.Join(e.dir, "file.txt")
			if err := os.WriteFile(path, []byte("old line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			buf := e.loadBuffer(path)
			before := "old line"
			if tc.userEdit != "" {
				e.lua(`local b, l = ...; vim.api.nvim_buf_set_lines(b, 0, -1, false, { l })`, nil, buf, tc.userEdit)
				before = tc.userEdit
			}
			e.startSession()
			e.cmd(`AgentPrompt !write ` + path + ` agent line\n`)
			e.waitChat("Wrote 11 bytes to", 10*time.Second)
			if got := e.bufLines(buf); got != "agent line" {
				t.Fatalf("buffer = %q, want %q", got, "agent line")
			}
			var modified bool
			e.lua(`return vim.bo[...].modified`, &modified, buf)
			if modified == tc.wantSaved {
				t.Errorf("buffer modified = %v after the write, want %v", modified, !tc.wantSaved)
			}
			disk, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(disk) != tc.wantDisk {
				t.Errorf("file = %q, want %q", disk, tc.wantDisk)
			}
			// The user presses u in the buffer: the agent's write is one undo step.
			e.lua(`vim.cmd("botright sbuffer " .. ...)`, nil, buf)
			e.normalKeys("u")
			e.waitBuf(buf, 5*time.Second, before)
			if got := e.bufLines(buf); got != before {
				t.Errorf("after u the buffer = %q, want %q", got, before)
			}
		})
	}
}

// TestFsWriteIntoUnsavedBufferKeepsTheUsersText: a write into a buffer
// with the user's unsaved edits leaves the buffer and the file as they
// were, opens the agent's version beside the buffer (a diff), and tells
// the agent it was not written. (On the screen:
// TestScreenAgentWriteBesideUnsavedEdits.)
func TestFsWriteIntoUnsavedBufferKeepsTheUsersText(t *testing.T) {
	e := startEditor(t, "")
	path := filepath.Join(e.dir, "file.txt")
	if err := os.WriteFile(path, []byte("old line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := e.loadBuffer(path)
	e.lua(`local b = ...; vim.api.nvim_buf_set_lines(b, 0, -1, false, { "user line" })`, nil, buf)
	e.startSession()
	e.cmd(`AgentPrompt !write ` + path + ` agent line\n`)
	chat := e.waitChat("Could not write", 10*time.Second)
	if !strings.Contains(chat, "unsaved changes") {
		t.Errorf("the agent is not told why:\n%s", chat)
	}
	if got := e.bufLines(buf); got != "user line" {
		t.Errorf("the user's buffer = %q, want their text %q", got, "user line")
	}
	var modified bool
	e.lua(`return vim.bo[...].modified`, &modified, buf)
	if !modified {
		t.Errorf("the user's buffer is no longer modified")
	}
	if disk, _ := os.ReadFile(path); string(disk) != "old line\n" {
		t.Errorf("file = %q, want it untouched", disk)
	}
	var side struct {
		Name  string   `msgpack:"name"`
		Lines []string `msgpack:"lines"`
		Diff  bool     `msgpack:"diff"`
	}
	eventually(t, "the agent's version beside the buffer", 5*time.Second, func() (bool, string) {
		e.lua(`for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			local b = vim.api.nvim_win_get_buf(w)
			local name = vim.api.nvim_buf_get_name(b)
			if name:find("agentrun://agent-version", 1, true) then
				return { name = name, lines = vim.api.nvim_buf_get_lines(b, 0, -1, false), diff = vim.wo[w].diff }
			end
		end
		return { name = "" }`, &side)
		return side.Name != "", "no agentrun://agent-version window in the current tab page"
	})
	if !strings.Contains(side.Name, "agent-version/file.txt") || strings.Join(side.Lines, "\n") != "agent line" || !side.Diff {
		t.Errorf("the agent's version = %+v, want %s's agent line, in diff mode", side, path)
	}
}

func TestFsWriteWithoutBufferIsAtomic(t *testing.T) {
	e := startEditor(t, "")
	dir := filepath.Join(e.dir, "new", "dir")
	path := filepath.Join(dir, "out.txt")
	e.startSession()
	e.cmd(`AgentPrompt !write ` + path + ` one\ntwo\n`)
	e.waitChat("Wrote 8 bytes to", 10*time.Second)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "one\ntwo\n" {
		t.Errorf("file = %q", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, ent := range entries {
			names = append(names, ent.Name())
		}
		t.Errorf("directory holds %v, want only out.txt (no temp files left)", names)
	}
}
