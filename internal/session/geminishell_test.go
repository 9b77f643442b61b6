package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// geminiInstall makes a Gemini CLI as npm installs it (a bin symlink to
// its package's bundle) under dir and returns the bin folder.
func geminiInstall(t *testing.T, dir, pkg string) string {
	t.Helper()
	return geminiInstallVersion(t, dir, pkg, "0.61.0")
}

func geminiInstallVersion(t *testing.T, dir, pkg, version string) string {
	t.Helper()
	at := filepath.Join(dir, "lib", "node_modules", pkg)
	if err := os.MkdirAll(filepath.Join(at, "bundle"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(at, "package.json"), []byte(`{"name": "`+pkg+`", "version": "`+version+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(at, "bundle", "gemini.js"), []byte("#!/usr/bin/env node\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(at, "bundle", "gemini.js"), filepath.Join(bin, "gemini")); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestGeminiCommand(t *testing.T) {
	gemini := geminiInstall(t, t.TempDir(), geminiPackage)
	other := geminiInstall(t, t.TempDir(), "some-other-gemini")
	for _, c := range []struct {
		name    string
		cmd     []string
		path    string
		want    bool
		version string
	}{
		{"its bin in PATH", []string{"gemini", "--acp"}, gemini, true, "0.61.0"},
		{"its bin by path", []string{filepath.Join(gemini, "gemini"), "--acp"}, "", true, "0.61.0"},
		{"npx", []string{"npx", "-y", "@google/gemini-cli@0.62.1", "--acp"}, "", true, "0.62.1"},
		{"npx latest", []string{"npx", "-y", "@google/gemini-cli@latest", "--acp"}, "", true, ""},
		{"bunx", []string{"bunx", "@google/gemini-cli", "--acp"}, "", true, ""},
		{"another package's gemini", []string{"gemini", "--acp"}, other, false, ""},
		{"not found", []string{"no-such-gemini-here"}, gemini, false, ""},
		{"another agent", []string{"npx", "@zed-industries/claude-agent-acp"}, "", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var env []string
			if c.path != "" {
				env = []string{"PATH=" + c.path}
			}
			if got, v := geminiCommand(c.cmd, env); got != c.want || v != c.version {
				t.Errorf("geminiCommand(%q) = %v, %q, want %v, %q", c.cmd, got, v, c.want, c.version)
			}
		})
	}
}

func TestGeminiTrusts(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(home, "src", "project")
	if err := os.MkdirAll(filepath.Join(project, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".gemini", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Remove(filepath.Join(home, ".gemini", name)) })
	}
	for _, c := range []struct {
		name, folders, settings, system string
		env                             []string
		cwd                             string
		want                            bool
	}{
		{name: "nothing said", cwd: project},
		{name: "GEMINI_CLI_TRUST_WORKSPACE", env: []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, cwd: project, want: true},
		{name: "restricted wins", env: []string{"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_RESTRICTED_MODE=true"}, cwd: project},
		{name: "trusted folder", folders: `{"` + project + `": "TRUST_FOLDER"}`, cwd: project, want: true},
		{name: "below a trusted folder", folders: `{"` + project + `": "TRUST_FOLDER"}`, cwd: filepath.Join(project, "sub"), want: true},
		{name: "its parent trusted", folders: `{"` + filepath.Join(project, "sub") + `": "TRUST_PARENT"}`, cwd: project, want: true},
		{name: "the longer rule decides", folders: `{"` + home + `": "TRUST_FOLDER", "` + project + `": "DO_NOT_TRUST"}`, cwd: project},
		{name: "another folder trusted", folders: `{"` + filepath.Join(project, "sub") + `": "TRUST_FOLDER"}`, cwd: project},
		{name: "folder trust off", settings: `{"security": {"folderTrust": {"enabled": false}}}`, cwd: project, want: true},
		// Gemini skips a system file in a folder others may write (t.TempDir's)
		{name: "folder trust off, a system file it skips says on", settings: `{"security": {"folderTrust": {"enabled": false}}}`,
			env: []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + filepath.Join(home, ".gemini", "system.json")}, system: `{"security": {"folderTrust": {"enabled": true}}}`, cwd: project, want: true},
		{name: "folder trust off in a system file it skips", system: `{"security": {"folderTrust": {"enabled": false}}}`,
			env: []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + filepath.Join(home, ".gemini", "system.json")}, cwd: project},
		{name: "an IDE companion may speak", folders: `{"` + project + `": "TRUST_FOLDER"}`, env: []string{"GEMINI_CLI_IDE_SERVER_PORT=4000"}, cwd: project},
		{name: "unreadable rules", folders: `{"` + project + `": "TRUST_FOLDER",}`, cwd: project},
		{name: "rules with comments", folders: "// mine\n{\n  /* the project */ \"" + project + "\": \"TRUST_FOLDER\" // yes\n}", cwd: project, want: true},
		{name: "a // or /* in a string is no comment", folders: `{"/x//y/*": "DO_NOT_TRUST", "` + project + `": "TRUST_FOLDER"}`, cwd: project, want: true},
		{name: "folder trust off, with comments", settings: "{\"security\": {/* off */ \"folderTrust\": {\"enabled\": false}}} // end", cwd: project, want: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.folders != "" {
				write(t, "trustedFolders.json", c.folders)
			}
			if c.settings != "" {
				write(t, "settings.json", c.settings)
			}
			if c.system != "" {
				write(t, "system.json", c.system)
			}
			env := append([]string{"HOME=" + home, "GEMINI_CLI_HOME=", "GEMINI_CLI_TRUST_WORKSPACE=", "GEMINI_RESTRICTED_MODE=", "GEMINI_CLI_IDE_SERVER_PORT=", "GEMINI_CLI_IDE_WORKSPACE_PATH=",
				"GEMINI_CLI_TRUSTED_FOLDERS_PATH=", "GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + filepath.Join(home, "none.json")}, c.env...)
			got, why := geminiTrusts(c.cwd, envLookup(env))
			if got != c.want {
				t.Errorf("geminiTrusts(%s) = %v (%q), want %v", c.cwd, got, why, c.want)
			}
		})
	}
}

// TestGeminiShell: the policy flags a Gemini session gets where its shell
// can be left out, and why it is kept where it cannot; the user's own
// policies folder is passed along with ours, and nothing is written to
// the user's files.
func TestGeminiShell(t *testing.T) {
	home := t.TempDir()
	bin := geminiInstall(t, t.TempDir(), geminiPackage)
	cwd := t.TempDir()
	env := []string{"PATH=" + bin, "HOME=" + home, "GEMINI_CLI_HOME=", "GEMINI_RESTRICTED_MODE=", "GEMINI_CLI_TRUST_WORKSPACE=true",
		"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + filepath.Join(home, "none.json"), "GEMINI_CLI_SYSTEM_DEFAULTS_PATH="}
	cmd := []string{"gemini", "--acp"}

	sh := geminiShell("gemini", "", cmd, env, cwd)
	if sh.state != ownShellLeftOut || len(sh.args) != 4 || sh.args[1] != filepath.Join(home, ".gemini", "policies") {
		t.Fatalf("geminiShell = %+v, want its shell left out with the user's policies and ours", sh)
	}
	rule, err := os.ReadFile(sh.args[3])
	if err != nil || !strings.Contains(string(rule), `toolName = "run_shell_command"`) {
		t.Errorf("the policy file reads %q (%v)", rule, err)
	}
	_ = os.RemoveAll(sh.dir)
	// their own --policy already leaves the default folder out: only ours
	// is added
	mine := geminiShell("gemini", "", []string{"gemini", "--acp", "--policy", "/their/rules.toml"}, env, cwd)
	if len(mine.args) != 2 || !strings.HasSuffix(mine.args[1], "agentrun-shell.toml") {
		t.Errorf("with their own --policy, geminiShell = %+v, want only ours added", mine)
	}
	_ = os.RemoveAll(mine.dir)
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("the user's home got %v", entries)
	}

	for _, c := range []struct {
		name, mode, settings string
		env                  []string
		why                  string
	}{
		{name: "terminals agent", mode: terminalsAgent, why: `you set agents.gemini.terminals = "agent"`},
		{name: "untrusted", env: []string{"GEMINI_CLI_TRUST_WORKSPACE=false"}, why: "in a folder it does not trust"},
		{name: "nothing says it is trusted", env: []string{"GEMINI_CLI_TRUST_WORKSPACE="}, why: "and it does not trust " + cwd},
		{name: "policyPaths of theirs", settings: `{"policyPaths": ["/x"]}`, why: `sets "policyPaths"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.settings != "" {
				if err := os.MkdirAll(filepath.Join(cwd, ".gemini"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(cwd, ".gemini", "settings.json"), []byte(c.settings), 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.RemoveAll(filepath.Join(cwd, ".gemini"))
			}
			sh := geminiShell("gemini", c.mode, cmd, append(append([]string(nil), env...), c.env...), cwd)
			if sh.args != nil || sh.dir != "" || !strings.HasPrefix(sh.state, ownShellKept+": ") || !strings.Contains(sh.why, c.why) {
				t.Errorf("geminiShell = %+v, want its shell kept because %q", sh, c.why)
			}
		})
	}
	old := geminiInstallVersion(t, t.TempDir(), geminiPackage, "0.30.2")
	if sh := geminiShell("gemini", "", cmd, append(append([]string(nil), env...), "PATH="+old), cwd); sh.args != nil || !strings.Contains(sh.why, "Gemini CLI 0.30.2 is older than 0.61.0") {
		t.Errorf("an older Gemini CLI got %+v, want its shell kept (it may not know --policy)", sh)
	}
	if sh := geminiShell("claude", "", []string{"npx", "@zed-industries/claude-agent-acp"}, env, cwd); sh.state != "" || sh.args != nil {
		t.Errorf("another agent got %+v", sh)
	}
}
