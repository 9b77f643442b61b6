package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// editFile opens a file with lines in e and changes its first line
// without saving (the context must carry the buffer as it is).
func (e *editor) editFile(name string, lines ...string) string {
	e.t.Helper()
	path := filepath.Join(e.cwd(), name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.cmd("edit " + path)
	e.lua(`vim.api.nvim_buf_set_lines(0, 0, 1, false, { "unsaved first line" })`, nil)
	return path
}

// TestContextBlocks: #buffer, #selection (a range) and @path arrive as
// embedded resources for an agent that takes them, with the buffer's
// unsaved text, and an @image as an image; as links for one that takes
// neither.
func TestContextBlocks(t *testing.T) {
	for _, embed := range []bool{true, false} {
		t.Run(fmt.Sprintf("embedded=%v", embed), func(t *testing.T) {
			extra := ""
			if !embed {
				extra = `AGENTRUN_TEST_NO_EMBED = "1"`
			}
			e := claudeLikeEnv(t, extra)
			path := e.editFile("main.go", "package main", "", "func main() {}", "// end")
			other := filepath.Join(e.cwd(), "notes.txt")
			if err := os.WriteFile(other, []byte("note one\nnote two\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			shot := filepath.Join(e.cwd(), "shot.png")
			if err := os.WriteFile(shot, append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 92)...), 0o644); err != nil {
				t.Fatal(err)
			}
			e.cmd("AgentPrompt ctx #buffer @notes.txt @shot.png")
			want := fmt.Sprintf("BLOCKS resource(file://%s,42,text/x-go,unsaved first line) resource(file://%s,18,text/plain,note one) image(image/png,100,file://%s)", path, other, shot)
			if !embed {
				want = fmt.Sprintf("BLOCKS resource_link(file://%s) resource_link(file://%s) resource_link(file://%s)", path, other, shot)
			}
			e.waitChat(want, 20*time.Second)
			e.idle(10 * time.Second)
			e.cmd("buffer " + path)
			e.cmd("3,4AgentPrompt ctx about these")
			want = fmt.Sprintf("BLOCKS resource(file://%s#L3-L4,22,text/x-go,func main() {})", path)
			if !embed {
				want = fmt.Sprintf("BLOCKS resource_link(file://%s#L3-L4)", path)
			}
			e.waitChat(want, 20*time.Second)
		})
	}
}

// TestContextMissingFile: @path naming no file is said, and nothing is sent.
func TestContextMissingFile(t *testing.T) {
	e := claudeLikeEnv(t, "")
	e.cmd("AgentPrompt ctx @no-such-file.txt")
	if n := e.noteText(); !strings.Contains(n, "@no-such-file.txt: no readable file") {
		t.Errorf("notes %q", n)
	}
	if strings.Contains(e.chat(), "BLOCKS") {
		t.Error("the prompt was sent")
	}
}

// TestContextFromThePromptArea: typed in the chat's prompt area (not a
// file buffer), #buffer names the file used last, even one opened before
// the plugin was first used.
func TestContextFromThePromptArea(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed")
	}
	e := startEditor(t, "")
	path := filepath.Join(e.cwd(), "first.go")
	if err := os.WriteFile(path, []byte("package first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.cmd("edit " + path) // before any agentrun module is loaded
	e.lua(fmt.Sprintf(`require("agentrun").setup({ default_agent = "claudelike",
		agents = { claudelike = { cmd = { %q, %q } } } })`, node, filepath.Join(root, "tests", "node", "claudelike.mjs")), nil)
	e.startSession()
	e.lua(`local s = require("agentrun.state").session()
vim.api.nvim_set_current_win(vim.fn.bufwinid(s.chat.prompt_buf))
vim.api.nvim_buf_set_lines(s.chat.prompt_buf, 0, -1, false, { "ctx what is #buffer" })
s.chat:send()`, nil)
	e.waitChat(fmt.Sprintf("BLOCKS resource(file://%s,14,text/x-go,package first)", path), 20*time.Second)
}
