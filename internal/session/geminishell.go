package session

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// Why this file is long: leaving Gemini CLI's shell out safely takes
// reading several of Gemini's own ways as its code does (which command is
// Gemini, which version, which folders it trusts, which settings files it
// reads), each a mirror of a part of its bundle named below; kept
// together so that one file says all agentrun assumes of Gemini.

// Gemini CLI's own shell (run_shell_command) runs commands with no output
// over ACP, so a Gemini session whose commands run in agentrun's
// terminals leaves it out, for that session only, where Gemini allows it
// without a change to the user's settings. What Gemini CLI 0.61 does,
// read in its bundle (tests/gemini/node_modules/@google/gemini-cli):
//
//   - Its system settings and system defaults files, which
//     GEMINI_CLI_SYSTEM_SETTINGS_PATH / GEMINI_CLI_SYSTEM_DEFAULTS_PATH
//     could point at a merged copy, are skipped unless they and every
//     folder above them are owned by root and not writable by others
//     (chunk-2YTYPKEZ.js _doLoadSettings → loadSystemFile, and
//     chunk-JDPZ4CE3.js isFileAndDirectorySecureSync →
//     checkPosixStatsSecurity): agentrun, not root, cannot write one.
//   - Nothing in session/new (no _meta is read: gemini-*.js
//     AcpSessionManager.newSession) or a mode leaves a tool out.
//   - Its --policy flag adds policy files (gemini-*.js parseArguments);
//     a rule that denies a tool with no argsPattern leaves the tool out
//     of what the model is offered (chunk-JDPZ4CE3.js PolicyEngine.
//     getExcludedTools, Config.getExcludeTools). The flag replaces the
//     settings' policyPaths (loadCliConfig: argv.policy ??
//     settings.policyPaths) and, given, the default user policies folder
//     is not read (getPolicyDirectories): so agentrun passes that folder
//     too, and uses the flag only when no settings file names
//     policyPaths. Policy files are read at each session/new, with the
//     user's own rules and settings (tools.exclude included) as before.
//   - The same file lets our tool's calls run without Gemini asking
//     first (but in Plan mode, read-only): agentrun asks about each
//     command by the user's rules, as Claude Code's _meta has it.
//   - Gemini starts no MCP server, ours included, in a folder it does not
//     trust (chunk-JDPZ4CE3.js McpClientManager.startConfiguredMcpServers
//     and maybeDiscoverMcpServer: isTrustedFolder). There its shell is
//     the only way it has to run commands, so it stays: geminiTrusts
//     reads the trust as Gemini does (checkPathTrust), and anything it
//     cannot tell counts as untrusted.
//
// The flag must be on Gemini's command line from its start, before
// initialize names the agent: the command is known as Gemini CLI when it
// runs the @google/gemini-cli package (its bin found in PATH, or named to
// npx or bunx).

// geminiPackage is Gemini CLI's npm package, geminiAgentName the name it
// gives itself in initialize.
const (
	geminiPackage   = "@google/gemini-cli"
	geminiAgentName = "gemini-cli"
)

// geminiShellRule is the policy agentrun adds to a Gemini session whose
// commands run in agentrun's terminals: its own shell is left out.
const geminiShellRule = `# agentrun.nvim: this Gemini CLI session runs its commands in agentrun's
# terminals (its MCP tool), so Gemini's own shell is left out of it.
# Written for one session and removed when it ends; your settings and
# policies apply as ever.
[[rule]]
toolName = "run_shell_command"
decision = "deny"
priority = 999

# agentrun asks about each command its tool runs, by your
# terminal.approve rules: Gemini does not ask again (but in Plan mode).
[[rule]]
mcpName = "agentrun"
toolName = "*"
decision = "allow"
priority = 999
modes = ["default", "autoEdit", "yolo"]
`

// What status() says of an agent's own shell (own_shell).
const (
	ownShellLeftOut = "left out for this session"
	ownShellKept    = "kept"
)

// ownShell is what became of an agent's own shell when its session
// started.
type ownShell struct {
	// args go after the agent's command; dir is removed when the
	// session ends ("" when none).
	args []string
	dir  string
	// state is ownShellLeftOut, "kept: why", or "" for an agent whose
	// own shell agentrun does not look at.
	state string
	// why says why it was kept, for the split of its first command ("" when
	// left out or not Gemini).
	why string
}

// geminiShell decides, before Gemini CLI starts, whether its own shell is
// left out of the session: name is the agent's name in the user's
// config, mode its `terminals` option ("" for the default: ours), cmd
// and env (KEY=VALUE over ours) start it in cwd. The reasons it gives
// for keeping the shell say what to do.
func geminiShell(name, mode string, cmd, env []string, cwd string) ownShell {
	gemini, version := geminiCommand(cmd, env)
	if !gemini {
		return ownShell{}
	}
	if version != "" && olderVersion(version, geminiPolicyVersion) {
		return keptShell(fmt.Sprintf("Gemini CLI %s is older than %s, the first agentrun leaves its shell out of (with its --policy flag); update it to watch its commands live", version, geminiPolicyVersion))
	}
	if mode == terminalsAgent {
		return keptShell(fmt.Sprintf(`you set agents.%s.terminals = "agent"; leave it unset to watch them live in agentrun's terminals`, name))
	}
	lookup := envLookup(env)
	theirPolicy := false // their own --policy replaces the default folder already
	for _, a := range cmd[1:] {
		switch {
		case a == "--skip-trust":
			// Gemini sets GEMINI_CLI_TRUST_WORKSPACE for it (parseArguments)
			lookup = envLookup(append(append([]string(nil), env...), "GEMINI_CLI_TRUST_WORKSPACE=true"))
		case a == "--policy" || strings.HasPrefix(a, "--policy="):
			theirPolicy = true
		case a == "--":
			return keptShell(fmt.Sprintf("agents.%s.cmd ends its options with --, after which agentrun cannot add the --policy flag that would leave it out", name))
		}
	}
	if trusted, why := geminiTrusts(cwd, lookup); !trusted {
		return keptShell(fmt.Sprintf("Gemini CLI starts no MCP server (agentrun's terminal tool) in a folder it does not trust%s. "+
			"Trust this one in Gemini (its folder trust prompt, or ~/.gemini/trustedFolders.json), or set GEMINI_CLI_TRUST_WORKSPACE = \"true\" in agents.%s.env; agentrun leaves Gemini's settings alone", why, name))
	}
	home := geminiHome(lookup)
	for _, f := range geminiSettingsFiles(cwd, home, lookup) {
		if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), `"policyPaths"`) {
			return keptShell(f + ` sets "policyPaths", which the --policy flag that would leave it out replaces; to leave it out yourself, add "tools": {"exclude": ["run_shell_command"]} to your settings.json`)
		}
	}
	dir, err := os.MkdirTemp("", "agentrun-gemini-")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "agentrun-shell.toml"), []byte(geminiShellRule), 0o600)
	}
	if err != nil {
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
		return keptShell("agentrun could not write the policy file that leaves it out (" + err.Error() + ")")
	}
	args := []string{"--policy", filepath.Join(home, ".gemini", "policies"), "--policy", filepath.Join(dir, "agentrun-shell.toml")}
	if theirPolicy {
		args = args[2:]
	}
	return ownShell{args: args, dir: dir, state: ownShellLeftOut}
}

// keptShell is a Gemini CLI's shell kept for why.
func keptShell(why string) ownShell { return ownShell{state: ownShellKept + ": " + why, why: why} }

// notKnownGemini is why the shell of a Gemini CLI whose command was not
// known as one before it started (a wrapper script) was kept.
func notKnownGemini(name string) ownShell {
	return keptShell(fmt.Sprintf("agentrun did not know before it started that agents.%s.cmd runs Gemini CLI (it knows the gemini command of the %s package, and npx or bunx %s)", name, geminiPackage, geminiPackage))
}

// geminiPolicyVersion is the oldest Gemini CLI agentrun gives --policy:
// the one it is tested with (an older one without the flag would refuse
// to start).
const geminiPolicyVersion = "0.61.0"

// geminiCommand reports whether cmd runs Gemini CLI, and which version
// when it can tell: its first word is a bin of the @google/gemini-cli
// package (found in the agent's PATH, symlinks followed; the version its
// package.json says), or npx, bunx or pnpm dlx is asked for the package
// (the version it names, if any; "latest" is none).
func geminiCommand(cmd, env []string) (gemini bool, version string) {
	if len(cmd) == 0 {
		return false, ""
	}
	for _, a := range cmd[1:] {
		if a == geminiPackage {
			return true, ""
		}
		if v, ok := strings.CutPrefix(a, geminiPackage+"@"); ok {
			if v == "latest" {
				v = ""
			}
			return true, v
		}
	}
	path := cmd[0]
	if !strings.Contains(path, "/") {
		dirs := envLookup(env)("PATH")
		for _, d := range filepath.SplitList(dirs) {
			if p := filepath.Join(d, path); isExecutable(p) {
				path = p
				break
			}
		}
		if !strings.Contains(path, "/") {
			found, err := exec.LookPath(path)
			if err != nil {
				return false, ""
			}
			path = found
		}
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false, ""
	}
	// …/node_modules/@google/gemini-cli/bundle/gemini.js (or dist/index.js)
	for dir, i := filepath.Dir(real), 0; i < 3; dir, i = filepath.Dir(dir), i+1 {
		data, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			continue
		}
		var pkg struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		if json.Unmarshal(data, &pkg) != nil || pkg.Name != geminiPackage {
			return false, ""
		}
		return true, pkg.Version
	}
	return false, ""
}

// olderVersion reports whether version v (major.minor.patch, maybe with a
// suffix) is older than min; one it cannot read is not.
func olderVersion(v, min string) bool {
	parse := func(s string) (n [3]int, ok bool) {
		s, _, _ = strings.Cut(s, "-")
		parts := strings.Split(s, ".")
		if len(parts) != 3 {
			return n, false
		}
		for i, p := range parts {
			if _, err := fmt.Sscanf(p, "%d", &n[i]); err != nil {
				return n, false
			}
		}
		return n, true
	}
	a, ok1 := parse(v)
	b, ok2 := parse(min)
	if !ok1 || !ok2 {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// envLookup reads a variable as the agent sees it: env (KEY=VALUE, the
// last one wins) over ours.
func envLookup(env []string) func(string) string {
	return func(key string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
				return v
			}
		}
		return os.Getenv(key)
	}
}

// geminiHome is the folder holding Gemini's .gemini (its homedir():
// GEMINI_CLI_HOME, else the home directory).
func geminiHome(lookup func(string) string) string {
	if h := lookup("GEMINI_CLI_HOME"); h != "" {
		return h
	}
	if h := lookup("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// geminiSettingsFiles are the settings files Gemini CLI reads for a
// session in cwd: system, system defaults, the user's and the
// workspace's (getSystemSettingsPath, getSystemDefaultsPath).
func geminiSettingsFiles(cwd, home string, lookup func(string) string) []string {
	system := lookup("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
	if system == "" {
		system = "/etc/gemini-cli/settings.json"
		if runtime.GOOS == "darwin" {
			system = "/Library/Application Support/GeminiCli/settings.json"
		}
	}
	defaults := lookup("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
	if defaults == "" {
		defaults = filepath.Join(filepath.Dir(system), "system-defaults.json")
	}
	return []string{system, defaults, filepath.Join(home, ".gemini", "settings.json"), filepath.Join(cwd, ".gemini", "settings.json")}
}

// How Gemini CLI trusts a folder (trustedFolders.json's values).
const (
	trustFolder = "TRUST_FOLDER"
	trustParent = "TRUST_PARENT"
	doNotTrust  = "DO_NOT_TRUST"
)

// geminiTrusts says whether Gemini CLI trusts cwd, as its checkPathTrust
// decides (chunk-JDPZ4CE3.js): GEMINI_RESTRICTED_MODE or
// GEMINI_CLI_TRUST_WORKSPACE in its environment, then folder trust
// switched off in the settings (security.folderTrust.enabled), then an
// IDE companion's word (not read: where one may speak, the folder counts
// as untrusted), then the longest matching rule of its
// trustedFolders.json (both read, as Gemini does, with their // and /* */
// comments left out). What it cannot read counts as not trusted; why says
// which (after "a folder it does not trust").
func geminiTrusts(cwd string, lookup func(string) string) (trusted bool, why string) {
	switch {
	case lookup("GEMINI_RESTRICTED_MODE") == "true":
		return false, " (GEMINI_RESTRICTED_MODE is set)"
	case lookup("GEMINI_CLI_TRUST_WORKSPACE") == "false":
		return false, " (GEMINI_CLI_TRUST_WORKSPACE is \"false\")"
	case lookup("GEMINI_CLI_TRUST_WORKSPACE") == "true":
		return true, ""
	}
	home := geminiHome(lookup)
	// security.folderTrust.enabled as merged: system defaults, then the
	// user's, then system settings win (mergeSettings; the workspace's
	// counts only once trusted); true unless one says otherwise
	files := geminiSettingsFiles(cwd, home, lookup)
	enabled := true
	for i, f := range []string{files[1], files[2], files[0]} {
		if i != 1 && !rootsFile(f) {
			continue // Gemini skips a system file root does not own
		}
		var s struct {
			Security struct {
				FolderTrust struct {
					Enabled *bool `json:"enabled"`
				} `json:"folderTrust"`
			} `json:"security"`
		}
		if data, err := os.ReadFile(f); err == nil && json.Unmarshal(stripJSONComments(data), &s) == nil && s.Security.FolderTrust.Enabled != nil {
			enabled = *s.Security.FolderTrust.Enabled
		}
	}
	if !enabled {
		return true, ""
	}
	if lookup("GEMINI_CLI_IDE_SERVER_PORT") != "" || lookup("GEMINI_CLI_IDE_WORKSPACE_PATH") != "" {
		// its IDE companion (VS Code's) may connect and say otherwise
		return false, " (an IDE companion may decide the trust: GEMINI_CLI_IDE_SERVER_PORT is set)"
	}
	path := lookup("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
	if path == "" {
		path = filepath.Join(home, ".gemini", "trustedFolders.json")
	}
	var rules map[string]string
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(stripJSONComments(data), &rules)
	}
	at := realPath(cwd)
	best, level := -1, ""
	for rule, l := range rules {
		eff := rule
		if l == trustParent {
			eff = filepath.Dir(rule)
		}
		if isSubpath(realPath(eff), at) && len(rule) > best {
			best, level = len(rule), l
		}
	}
	if level == trustFolder || level == trustParent {
		return true, ""
	}
	return false, ", and it does not trust " + cwd
}

// rootsFile reports whether Gemini reads the system settings file f:
// it and every folder above it are owned by root and writable by no
// one else (chunk-JDPZ4CE3.js isFileAndDirectorySecureSync).
func rootsFile(f string) bool {
	for p := realPath(f); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// realPath is p with its symlinks resolved, or p when it cannot be.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// isSubpath reports whether p is parent or below it.
func isSubpath(parent, p string) bool {
	rel, err := filepath.Rel(parent, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// shellLeftOutAlone is called when s's session opened: when agentrun left
// the agent's own shell out of it but the agent did not list our tool
// (Gemini CLI starts its MCP servers before it answers session/new, in
// ACP mode: McpClientManager's discovery is awaited in Config.initialize;
// `agentrun mcp` reports tools/list before it answers it), agentrun's
// policy file goes, s's shell is kept with why, and it reports true: the
// session must be opened again, without the policy.
func (ss *Sessions) shellLeftOutAlone(s *session) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s.shell.dir == "" || s.shell.state != ownShellLeftOut || s.tool == toolListed || s.tool == toolUsed {
		return false
	}
	_ = os.RemoveAll(s.shell.dir)
	s.early = nil // a loaded session's history comes again
	s.shell = keptShell(fmt.Sprintf("Gemini CLI did not start agentrun's terminal tool (its MCP server) for this session, though agentrun took the folder as trusted: "+
		"your Gemini settings may leave it out (mcp.allowed, mcp.excluded), or it may not trust %s; see :checkhealth and the agentrun log", s.args.Cwd))
	return true
}

// stripJSONComments blanks the // and /* */ comments of JSON text outside
// its strings, as Gemini CLI's strip-json-comments does before it parses
// its settings and trustedFolders.json (a trailing comma stays an error).
func stripJSONComments(data []byte) []byte {
	out := make([]byte, len(data))
	copy(out, data)
	blank := func(i, j int) {
		for ; i < j; i++ {
			if out[i] != '\n' && out[i] != '\r' {
				out[i] = ' '
			}
		}
	}
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == '"':
			for i++; i < len(out) && out[i] != '"'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '/':
			j := i
			for j < len(out) && out[j] != '\n' {
				j++
			}
			blank(i, j)
			i = j
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '*':
			j := i + 2
			for j+1 < len(out) && (out[j] != '*' || out[j+1] != '/') {
				j++
			}
			j = min(j+2, len(out))
			blank(i, j)
			i = j - 1
		}
	}
	return out
}
