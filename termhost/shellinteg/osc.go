package shellinteg

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
)

// Shell integration (OSC sequences → AHP actions).
//
// A shell with integration (our scripts in shellinteg/, VS Code's, or any
// FinalTerm-style prompt) marks its prompt and commands with OSC 633 or
// OSC 133, reports its cwd with OSC 633;P;Cwd= or OSC 7, and programs set
// the title with OSC 0/2. Parser turns those payloads, handed
// over one at a time by the escape scanner in stream order, into actions:
//
//	OSC 0;t / 2;t            terminal/titleChanged (when it changes)
//	OSC 7;file://host/path   terminal/cwdChanged (percent-decoded; local host only)
//	OSC 633;A / 133;A        prompt start
//	OSC 633;B / 133;B        prompt end (the user types the command)
//	OSC 633;E;cmd;nonce      the command line, trusted only with our nonce
//	OSC 633;C / 133;C        terminal/commandExecuted (commandLine from E)
//	OSC 633;D;n / 133;D;n    terminal/commandFinished (exit n, duration)
//	OSC 633;P;Cwd=path       terminal/cwdChanged
//
// The first 633 or 133 sequence also yields terminal/commandDetectionAvailable.
// The nonce is a secret we put in the shell's environment (and the script
// removes from it): a program that prints its own OSC 633;E cannot forge
// the command line of what the user ran.

// Parser tracks one terminal's shell integration state. It is
// not safe for concurrent use (the terminal's read loop owns it).
type Parser struct {
	terminal string // URI put on every action
	nonce    string
	hostname string

	detected    bool
	commandLine string // from the last trusted E, for the next C
	running     bool
	runningID   string
	started     time.Time
	commands    int
	title, cwd  string // last reported, so only changes are reported
}

// NewParser returns the tracker for the terminal at URI
// terminal. nonce is the secret given to the shell (AGENTRUN_NONCE); with
// an empty nonce no command line is trusted (commandLine stays "").
func NewParser(terminal, nonce string) *Parser {
	host, _ := os.Hostname()
	return &Parser{terminal: terminal, nonce: nonce, hostname: host}
}

// isMarker reports whether payload is an OSC 633 or OSC 133
// sequence: markers meant for us that AHP says must not reach the display
// or terminal/data.
func isMarker(payload []byte) bool {
	code, _, _ := bytes.Cut(payload, []byte{';'})
	return string(code) == "633" || string(code) == "133"
}

// HandleOSC interprets one OSC payload (the bytes between "ESC ]" and BEL
// or ST) seen at time now and returns the actions it causes, in order;
// usually none. Unknown or malformed payloads are ignored.
func (si *Parser) HandleOSC(payload []byte, now time.Time) []ahp.Action {
	code, rest, _ := strings.Cut(string(payload), ";")
	switch code {
	case "0", "2":
		return si.setTitle(rest)
	case "7":
		return si.setCwdURI(rest)
	case "633":
		return si.handle633(rest, now)
	case "133":
		return si.handle133(rest, now)
	}
	return nil
}

// handle633 interprets VS Code's shell integration protocol: the prompt
// and command markers it shares with OSC 133, plus E (the command line,
// nonce-checked) and P;Cwd=.
func (si *Parser) handle633(rest string, now time.Time) []ahp.Action {
	args := strings.Split(rest, ";")
	switch args[0] {
	case "E":
		if len(args) >= 3 && si.nonce != "" && args[2] == si.nonce {
			si.commandLine = strings.ToValidUTF8(unescape633(args[1]), "\uFFFD")
		}
		return si.withDetection(nil)
	case "P":
		var acts []ahp.Action
		if len(args) >= 2 {
			if path, ok := strings.CutPrefix(args[1], "Cwd="); ok {
				acts = si.setCwdPath(unescape633(path))
			}
		}
		return si.withDetection(acts)
	}
	return si.handleMarker(args, now) // F, G, H, ... and unknown letters: nil
}

// handle133 interprets FinalTerm's semantic prompt markers. Parameters
// such as aid=... are ignored; D's first parameter is the exit code.
func (si *Parser) handle133(rest string, now time.Time) []ahp.Action {
	return si.handleMarker(strings.Split(rest, ";"), now)
}

// handleMarker applies the prompt and command markers A-D that OSC 133
// and OSC 633 share; any other letter is ignored.
func (si *Parser) handleMarker(args []string, now time.Time) []ahp.Action {
	var acts []ahp.Action
	switch args[0] {
	case "A", "B":
		acts = si.finishDangling(now)
	case "C":
		acts = si.commandStarted(now)
	case "D":
		acts = si.commandFinished(args[1:], now)
	default:
		return nil
	}
	return si.withDetection(acts)
}

// withDetection prefixes commandDetectionAvailable the first time.
func (si *Parser) withDetection(acts []ahp.Action) []ahp.Action {
	if si.detected {
		return acts
	}
	si.detected = true
	return append([]ahp.Action{ahp.CommandDetectionAvailableAction{Terminal: si.terminal}}, acts...)
}

// commandStarted opens a command part for the command line the last
// trusted E reported.
func (si *Parser) commandStarted(now time.Time) []ahp.Action {
	acts := si.finishDangling(now)
	si.commands++
	si.running = true
	si.runningID = "cmd-" + strconv.Itoa(si.commands)
	si.started = now
	acts = append(acts, ahp.CommandExecutedAction{
		Terminal:    si.terminal,
		CommandID:   si.runningID,
		CommandLine: si.commandLine,
		Timestamp:   now.UnixMilli(),
	})
	si.commandLine = ""
	return acts
}

// commandFinished closes the running command; a D with no command running
// (the first prompt, an empty line) means nothing.
func (si *Parser) commandFinished(params []string, now time.Time) []ahp.Action {
	if !si.running {
		return nil
	}
	var code *int
	if len(params) > 0 {
		if n, err := strconv.Atoi(params[0]); err == nil {
			code = &n
		}
	}
	return []ahp.Action{si.finish(code, now)}
}

// finishDangling closes a command whose D never came (the next prompt or
// command started first), without an exit code.
func (si *Parser) finishDangling(now time.Time) []ahp.Action {
	if !si.running {
		return nil
	}
	return []ahp.Action{si.finish(nil, now)}
}

func (si *Parser) finish(code *int, now time.Time) ahp.Action {
	si.running = false
	d := max(now.Sub(si.started).Milliseconds(), 0)
	return ahp.CommandFinishedAction{Terminal: si.terminal, CommandID: si.runningID, ExitCode: code, DurationMs: &d}
}

// setTitle reports a new, non-empty title.
func (si *Parser) setTitle(title string) []ahp.Action {
	title = strings.ToValidUTF8(title, "\uFFFD")
	if title == "" || title == si.title {
		return nil
	}
	si.title = title
	return []ahp.Action{ahp.TitleChangedAction{Terminal: si.terminal, Title: title}}
}

// setCwdURI handles OSC 7's file://host/path, ignoring other hosts (a
// shell on another machine, e.g. over ssh, reports paths that are not ours).
func (si *Parser) setCwdURI(raw string) []ahp.Action {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" {
		return nil
	}
	if h := u.Hostname(); h != "" && !strings.EqualFold(h, "localhost") && !strings.EqualFold(h, si.hostname) {
		return nil
	}
	return si.setCwdPath(u.Path)
}

// setCwdPath reports a new absolute working directory as a file URI.
func (si *Parser) setCwdPath(path string) []ahp.Action {
	if !filepath.IsAbs(path) {
		return nil
	}
	uri := ahp.FileURI(path)
	if uri == si.cwd {
		return nil
	}
	si.cwd = uri
	return []ahp.Action{ahp.CwdChangedAction{Terminal: si.terminal, Cwd: uri}}
}

// unescape633 undoes VS Code's OSC 633 escaping: "\\" is a backslash and
// "\xHH" the byte HH (how ";" and control characters travel); any other
// backslash stays as it is.
func unescape633(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] == '\\' {
				b.WriteByte('\\')
				i++
				continue
			}
			if s[i+1] == 'x' && i+3 < len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 3
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
