package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestDocHasATagForEverything: every command, option, keymap, highlight
// group and public Lua function has its tag in doc/agentrun.txt.
func TestDocHasATagForEverything(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "doc", "agentrun.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]bool{}
	for _, m := range regexp.MustCompile(`\*([^*\s]+)\*`).FindAllSubmatch(doc, -1) {
		tags[string(m[1])] = true
	}
	e := startEditor(t, "")
	var want []string
	e.lua(`
		local want = {}
		for name in pairs(vim.api.nvim_get_commands({})) do
			if name:match("^Agent") then table.insert(want, ":" .. name) end
		end
		local d = vim.tbl_deep_extend("force", {}, require("agentrun.config").defaults, require("agentrun.config").unset)
		for k, v in pairs(d) do
			if k == "keymaps" then
				for km in pairs(v) do table.insert(want, "agentrun-keymap-" .. km) end
			elseif type(v) == "table" and k ~= "agents" then
				for sub in pairs(v) do table.insert(want, "agentrun-config-" .. k .. "." .. sub) end
			else
				table.insert(want, "agentrun-config-" .. k)
			end
		end
		for hl in pairs(require("agentrun.highlight").links) do table.insert(want, "hl-" .. hl) end
		for hl in pairs(require("agentrun.highlight").styles) do table.insert(want, "hl-" .. hl) end
		for fn, v in pairs(require("agentrun")) do
			if type(v) == "function" and not fn:match("^_") then table.insert(want, "agentrun." .. fn .. "()") end
		end
		table.sort(want)
		return want`, &want)
	if len(want) < 30 {
		t.Fatalf("found only %d things to document: %v", len(want), want)
	}
	for _, tag := range want {
		if !tags[tag] {
			t.Errorf("doc/agentrun.txt has no *%s* tag", tag)
		}
	}
}

// TestHelpTagsAreCurrent: doc/tags is committed (so :help agentrun works
// from a plain clone and `make demo`) and matches what :helptags makes of
// doc/agentrun.txt now.
func TestHelpTagsAreCurrent(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join(root, "doc", "tags"))
	if err != nil {
		t.Fatalf("doc/tags is missing (:help agentrun would fail): %v", err)
	}
	dir := t.TempDir()
	txt, err := os.ReadFile(filepath.Join(root, "doc", "agentrun.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agentrun.txt"), txt, 0o644); err != nil {
		t.Fatal(err)
	}
	e := startEditor(t, "")
	e.cmd("helptags " + dir)
	fresh, err := os.ReadFile(filepath.Join(dir, "tags"))
	if err != nil {
		t.Fatal(err)
	}
	if string(fresh) != string(committed) {
		t.Errorf("doc/tags is stale: run `make build` (or :helptags doc) and commit it")
	}
}

// TestLazySpecListsEveryCommand: the README's lazy.nvim spec loads the
// plugin on every command it defines, so none is missing until another ran.
func TestLazySpecListsEveryCommand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	spec := regexp.MustCompile(`(?s)cmd = \{(.*?)\}`).FindSubmatch(readme)
	if spec == nil {
		t.Fatal("README has no lazy.nvim spec with cmd = { ... }")
	}
	e := startEditor(t, "")
	var names []string
	e.lua(`local out = {}
		for name in pairs(vim.api.nvim_get_commands({})) do
			if name:match("^Agent") then table.insert(out, name) end
		end
		return out`, &names)
	for _, name := range names {
		if !regexp.MustCompile(`"` + name + `"`).Match(spec[1]) {
			t.Errorf("the README's lazy.nvim spec does not list %s: it would not exist until another command loaded the plugin", name)
		}
	}
}

// TestEventNamesAgree: the events Go sends (internal/event/names.go) are the
// ones Lua handles (events.lua), no more, no fewer.
func TestEventNamesAgree(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "internal", "event", "names.go"))
	if err != nil {
		t.Fatal(err)
	}
	var goNames []string
	for _, m := range regexp.MustCompile(`(?m)^\s*Name\w+\s*=\s*"(\w+)"`).FindAllSubmatch(src, -1) {
		goNames = append(goNames, string(m[1]))
	}
	sort.Strings(goNames)
	e := startEditor(t, "")
	var luaNames []string
	e.lua(`return require("agentrun.events").names`, &luaNames)
	if strings.Join(goNames, " ") != strings.Join(luaNames, " ") || len(goNames) == 0 {
		t.Errorf("Go sends %v; Lua handles %v", goNames, luaNames)
	}
}

// TestConfigTypesFollowTheDefaults: lua/agentrun/types.lua's config
// classes (what a language server completes in setup()) have a field for
// every option config.lua knows, and none it does not.
func TestConfigTypesFollowTheDefaults(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "lua", "agentrun", "types.lua"))
	if err != nil {
		t.Fatal(err)
	}
	// the fields of each class, by class name
	fields := map[string]map[string]bool{}
	var class string
	for _, line := range strings.Split(string(src), "\n") {
		if m := regexp.MustCompile(`^---@class (\S+)`).FindStringSubmatch(line); m != nil {
			class = m[1]
			fields[class] = map[string]bool{}
		} else if m := regexp.MustCompile(`^---@field (\w+)`).FindStringSubmatch(line); m != nil && class != "" {
			fields[class][m[1]] = true
		}
	}
	e := startEditor(t, "")
	var opts map[string][]string // section ("" the top) -> its options
	e.lua(`
		local d = vim.tbl_deep_extend("force", {}, require("agentrun.config").defaults, require("agentrun.config").unset)
		local out = { [""] = {} }
		for k, v in pairs(d) do
			table.insert(out[""], k)
			if type(v) == "table" and k ~= "agents" then
				out[k] = vim.tbl_keys(v)
			end
		end
		return out`, &opts)
	classOf := map[string]string{"": "agentrun.Config", "chat": "agentrun.ConfigChat", "terminal": "agentrun.ConfigTerminal", "remote": "agentrun.ConfigRemote", "checkpoint": "agentrun.ConfigCheckpoint", "keymaps": "agentrun.ConfigKeymaps"}
	for section, names := range opts {
		c, ok := classOf[section]
		if !ok {
			t.Errorf("config section %q has no class in types.lua", section)
			continue
		}
		for _, n := range names {
			if !fields[c][n] {
				t.Errorf("%s has no ---@field %s (config.lua has %s)", c, n, strings.TrimPrefix(section+"."+n, "."))
			}
			delete(fields[c], n)
		}
		for n := range fields[c] {
			t.Errorf("%s has ---@field %s, which config.lua does not know", c, n)
		}
	}
}

// TestLongFilesSayWhy: a source file over 400 lines (tests aside) says
// near its top why it is long ("Why this file is long: …"), so a reader
// knows whether it is one concern that belongs together or one to split.
func TestLongFilesSayWhy(t *testing.T) {
	const most = 400
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") && path != root || path == filepath.Join(root, "tests") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".lua") && !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(src), "\n")
		if len(lines) <= most {
			return nil
		}
		top := strings.Join(lines[:min(len(lines), 80)], "\n")
		if !strings.Contains(top, "Why this file is long:") {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s has %d lines and does not say near its top why it is long (\"Why this file is long: …\")", rel, len(lines))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTestsReadmeNamesEveryFile: tests/README.md names every test file
// of this folder, in the harness table or under the feature
// it tests, so a reader finds where a test lives and a new file is placed
// (13 were missing).
func TestTestsReadmeNamesEveryFile(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "tests", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "tests", "*_test.go"))
	if err != nil || len(files) < 50 {
		t.Fatalf("found %d test files: %v", len(files), err)
	}
	for _, f := range files {
		if name := filepath.Base(f); !strings.Contains(string(readme), "`"+name+"`") {
			t.Errorf("tests/README.md does not name %s: add it to the table of its feature", name)
		}
	}
}
