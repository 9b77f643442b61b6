-- The shapes of agentrun's tables, for a reader and for a language server
-- (lua-language-server reads these annotations: setup() completes its
-- options). Nothing runs here. tests/doc_test.go keeps the config classes
-- in step with config.lua's defaults.
error("agentrun.types holds annotations only; nothing requires it")

---@class agentrun.Config
---@field agents? table<string, agentrun.ConfigAgent> agents by name (the built-in "demo" is always there)
---@field default_agent? string the agent :AgentRun starts without a name ("demo")
---@field chat? agentrun.ConfigChat
---@field terminal? agentrun.ConfigTerminal
---@field keymaps? agentrun.ConfigKeymaps

---@class agentrun.ConfigAgent
---@field cmd string[] the agent's command line ({ "gemini", "--acp" })
---@field env? table<string, string> environment added for it
---@field host? string an ssh:// URL: the agent runs on that machine
---@field terminals? "agent"|"agentrun" who runs its commands: the agent through ACP terminals, or our MCP tool

---@class agentrun.ConfigChat
---@field position? "right"|"left"|"below"|"tab"
---@field size? integer columns beside, lines below (unset: 70 or 15)
---@field continue_last? boolean :AgentRun continues the agent's last session of the cwd

---@class agentrun.ConfigTerminal
---@field position? "below"|"right"|"float"|"none"
---@field size? integer lines below, columns right (unset: 12 or 80)
---@field kill_grace_ms? integer SIGTERM to SIGKILL delay in ms (unset: 3000)
---@field byte_limit? integer rendered text kept per terminal for the agent (unset: 16 MiB)
---@field scrollback? integer 'scrollback' of the splits (1..100000)
---@field allowed_cwd? string[] directories commands may run in, and below ({}: the session's cwd)
---@field approve? "agent"|"ask"|"run"|agentrun.Rules|fun(cmd: agentrun.Command): boolean|"ask"
---@field max_run_ms? integer kill a command after this long (0: no limit)
---@field sandbox? false|"project"|"project-net"|"strict"|table|fun(cmd: agentrun.Command): any
---@field limits? agentrun.Limits
---@field persist? boolean terminals you take over and :AgentShell shells outlive Neovim
---@field on_failure? ("quickfix"|"diagnostics")[] where a failed command's file:line failures go

---@class agentrun.Rules
---@field allow? string[] command patterns run without asking
---@field deny? string[] command patterns refused
---@field otherwise? "agent"|"ask"|"run" what the rest get

---@class agentrun.Limits
---@field memory? integer|string bytes, or "512M"
---@field processes? integer
---@field cpu_seconds? integer
---@field open_files? integer
---@field file_size? integer|string bytes, or "1G"

---@class agentrun.Command what a terminal.approve function gets
---@field line string the command line as you would type it
---@field argv string[] exactly what is executed ({ "/bin/sh", "-c", line })
---@field cwd string
---@field agent string
---@field session string
---@field commands { text: string, program: string }[] its simple commands: decide on these, not on line
---@field unknown string[] what of it cannot be known before it runs

---@class agentrun.ConfigKeymaps keys, or false for none
---@field interrupt? string|false
---@field kill? string|false
---@field close? string|false
---@field close_float? string|false
---@field send? string|false
---@field send_insert? string|false
---@field open? string|false
---@field takeover? string|false
---@field dispose? string|false
---@field quickfix? string|false
---@field rerun? string|false
---@field browse? string|false
---@field toggle? string|false
---@field history_prev? string|false
---@field history_next? string|false

---@class agentrun.Terminal one terminal of status().terminals
---@field id string "term-3", or "PID:term-3" of another host
---@field key? integer the session it belongs to
---@field session? string the agent's session id
---@field command? string its command line
---@field cwd? string
---@field state "running"|"exited"|"released"
---@field exit_code? integer
---@field signal? string "SIGTERM"
---@field how? string how it ended, as the split says it: "exit 1", "signal SIGTERM"
---@field ran_ms? integer how long it ran
---@field bufnr? integer its split's buffer
---@field owner "agentrun"|"agent" our pty, or a command the agent runs itself
---@field waiting boolean it waits for input
---@field ports integer[] TCP ports it listens on
---@field user? boolean started with :AgentShell

---@class agentrun.Session one session of status().sessions
---@field key integer the plugin's own key: what the functions take
---@field id? string the agent's session id
---@field agent string
---@field busy boolean a turn runs
---@field mode? string
---@field model? string
---@field label? string "Plan · Opus"
---@field title? string the agent's name for the session

---@class agentrun.Status what require("agentrun").status() returns
---@field sessions agentrun.Session[]
---@field terminals agentrun.Terminal[]
