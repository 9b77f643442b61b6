-- The shapes of agentrun's tables, for a reader and for a language server
-- (lua-language-server reads these annotations: setup() completes its
-- options). Nothing runs here. tests/doc_test.go keeps the config classes
-- in step with config.lua's defaults.
-- Why this file is long: it is the one place of every shape that crosses
-- between Go and Lua (each event's payload, each call's table) and of the
-- terminal record; tests read it as a whole (TestEventPayloadsAgree,
-- TestCallsAgree), and split it would need a list of its parts.
error("agentrun.types holds annotations only; nothing requires it")

-- A terminal as Lua keeps it (state.terminals[id]), fed by events;
-- state.describe_terminal makes what status() shows of it.
---@class agentrun.Terminal
---@field id string "term-3", "term-3@devbox", "ssh://devbox/PID:term-3", or an agent's own id
---@field state "running"|"exited"|"released"
---@field command? string the command line, or the title a socket host gives it
---@field title? string the agent's title of it
---@field cwd? string
---@field session? string the key of the session whose agent runs it (nil: yours, or another host's)
---@field session_id? string the agent's session id
---@field tool_call? string the agent's tool call that shows it
---@field sandbox? string the sandbox it runs in ("project"), when one
---@field exit_code? integer
---@field signal? string "SIGTERM"
---@field ran_ms? integer how long it ran
---@field ended_by? string why its display ended without an exit code (an agent's command: "failed", "ended with the turn")
---@field started_ms? integer when it started (vim.loop.now()), for an agent's command, whose run time Go does not know
---@field last_line? string its output's last line with text, when it ended
---@field bufnr? integer its terminal buffer
---@field chan? integer that buffer's channel
---@field pending? string[] output of an agent's command that came before its buffer
---@field cols? integer the size its pty was last given
---@field rows? integer
---@field shown? boolean another host's terminal attached here once
---@field end_lines? string[] the lines its split ends with, as the backend wrote them (display_ended)
---@field end_shown? boolean its split showed its end (the check a moment after display_ended)
---@field on_end_shown? fun()[] called once its split shows its end (termend.when_end_shown)
---@field end_noticed? boolean its end out of sight was told once
---@field exit_said? boolean User AgentRunTerminalExited fired for it
---@field waiting? boolean it waits for input (terminal_activity)
---@field ports? integer[] the ports it listens on
---@field wait_note? table the chat's note that it waits for input
---@field display_only? boolean a command the agent runs itself and shows (agentterm.lua)
---@field keeps_reporting? boolean its agent goes on reporting it after a cancel (codex-acp)
---@field user? boolean yours: :AgentShell, R, taken over, or another host's you hold
---@field interactive? boolean an interactive shell (:AgentShell alone)
---@field restarting? boolean stopped to run again in place (its end is no failure)
---@field killed? boolean you killed it (X, :AgentKill): its end reads "killed"
---@field cancelled? boolean its turn's cancel stopped it: its end reads "cancelled"
---@field runs? integer how many times R ran it
---@field row_of? string the id whose row in the list it takes (an R rerun)
---@field origin? "shell"|"sign_in"|"rerun" how a terminal of yours was started (nil: the agent's)
---@field rerun_as? string the id of its new run (R)
---@field remote? boolean another host's, followed over its socket (remote_attach)
---@field claim? table who holds it (another host's: { kind, client_id })
---@field claim_seq? integer the sequence number of the claim last heard
---@field was_detached? boolean it was detached when attached here
---@field detached? boolean you detached it (:AgentDetach)
---@field stale? boolean its backend exited (a new one may hand out its id)
---@field link_dropped? string the URL of its machine whose link dropped

---@class agentrun.Config
---@field agents? table<string, agentrun.ConfigAgent> agents by name (the built-in "demo" is always there)
---@field default_agent? string the agent :AgentRun starts without a name ("demo")
---@field chat? agentrun.ConfigChat
---@field terminal? agentrun.ConfigTerminal
---@field remote? agentrun.ConfigRemote
---@field checkpoint? agentrun.ConfigCheckpoint
---@field keymaps? agentrun.ConfigKeymaps

---@class agentrun.ConfigRemote
---@field wait_hours? number how long a backend on another machine keeps its sessions for a link that dropped (24)

---@class agentrun.ConfigCheckpoint
---@field copies_bytes? integer the most the copies of folders outside git take (100 MiB)

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
---@field live_ended? integer ended splits kept as live terminals out of sight (the newest; 3)
---@field kept_bytes? integer ended terminals' output the backend keeps in memory (unset: 64 MiB)
---@field allowed_cwd? string[] directories commands may run in, and below ({}: the session's cwd)
---@field approve? "agent"|"ask"|"run"|agentrun.Rules|fun(cmd: agentrun.Command): boolean|"ask"
---@field max_run_ms? integer kill a command after this long (0: no limit)
---@field sandbox? false|"project"|"project-net"|"strict"|table|fun(cmd: agentrun.Command): any
---@field limits? agentrun.Limits
---@field persist? boolean terminals you take over and :AgentShell shells outlive Neovim
---@field ask_before_quit? boolean a quit that would end your own commands asks first (true)
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
---@field argv string[] exactly what is executed ({ "/bin/bash", "--noprofile", "--norc", "-c", line })
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
---@field how? string how it ended, as the split says it: "exit 1", "signal SIGTERM", "interrupted"
---@field ran_ms? integer how long it ran
---@field bufnr? integer its split's buffer
---@field owner "agentrun"|"agent" our pty, or a command the agent runs itself
---@field waiting boolean it waits for input
---@field ports integer[] TCP ports it listens on
---@field user? boolean started as yours: :AgentShell, R, a sign-in
---@field origin? "agent"|"shell"|"sign_in"|"rerun" how it was started (nil: another host's)
---@field runs? integer the how many-th run (R ran it again)
---@field rerun_of? string the id of its first run, whose row it takes (R)
---@field rerun_as? string R ran it again: the id of its newer run (the list shows that one in this row)

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

-- The payload of each event Go sends (internal/event/types.go has the same
-- shapes as structs; TestEventPayloadsAgree checks the two, and that the
-- handlers read no other field). A field marked ? may be absent.

---@class agentrun.event.agent_terminal
---@field key string
---@field session_id string
---@field id string
---@field started boolean
---@field tool_call? string
---@field title? string
---@field cwd? string
---@field keeps_reporting? boolean
---@field data? string
---@field replace? boolean
---@field exited? boolean
---@field failed? boolean
---@field exit_code? integer
---@field signal? string
---@field not_run? string
---@field unreported? boolean
---@field ended_by? string why its display ended, when the agent gave no exit code nor signal
---@field end_line? string the line its split ends with ("[exit 1]", "[failed]"), made by the backend
---@field last_line? string its output's last line with text, when it ended

---@class agentrun.event.approve
---@field key string
---@field session_id string
---@field line string
---@field argv string[]
---@field env string[] NAME=value the agent set (terminal/create's env)
---@field cwd string
---@field sandbox string
---@field tool_call? string
---@field asks_first? string the mode that promises to ask
---@field token string
---@field file? string set for a question about an agent's file write: the path it gave
---@field real? string the file that write would change (symlinks and .. resolved)
---@field outside? boolean the file is outside the session's project

---@class agentrun.event.approve_cancelled
---@field token string
---@field why string "turn" or "withdrawn"

---@class agentrun.event.auth_required
---@field key string
---@field agent string
---@field methods any
---@field error string

---@class agentrun.event.display_ended
---@field id string
---@field lines string[] the lines the split ends with, as the backend wrote them ("[exit 0]", then "[released]")

---@class agentrun.event.elicitation
---@field key string
---@field session_id string
---@field tool_call string
---@field mode string
---@field message string
---@field fields any
---@field required string[]
---@field url string
---@field elicitation_id string
---@field token string

---@class agentrun.event.elicitation_complete
---@field key string
---@field elicitation_id string

---@class agentrun.event.elicitation_withdrawn
---@field token string
---@field why string "turn" or "withdrawn"

---@class agentrun.event.history_replayed
---@field key string

---@class agentrun.event.message
---@field key? string
---@field level string "error", "warn" or "info"
---@field text string

---@class agentrun.event.our_tool
---@field key string
---@field our_tool string
---@field note? string

---@class agentrun.event.permission
---@field key string
---@field session_id string
---@field tool_call any
---@field options any
---@field token string

---@class agentrun.event.permission_cancelled
---@field token string
---@field why string "turn" or "withdrawn"

---@class agentrun.event.chat_note
---@field key string
---@field text string
---@field tool_call? string

---@class agentrun.event.prompt_sent
---@field key string
---@field text string

---@class agentrun.event.remote_claimed
---@field id string
---@field claim table
---@field mine boolean
---@field seq integer

---@class agentrun.event.session_ended
---@field key string
---@field reason string "" unless the agent ended on its own
---@field stopped boolean

---@class agentrun.event.session_failed
---@field key string
---@field error string
---@field command? string
---@field cannot_run? string

---@class agentrun.event.session_list
---@field token string
---@field agent string
---@field sessions agentrun.event.EarlierSession[]
---@field load? boolean
---@field resume? boolean
---@field error? string

---@class agentrun.event.session_quiet
---@field key string
---@field agent string
---@field seconds integer

---@class agentrun.event.session_started
---@field key string
---@field session_id string
---@field agent string
---@field cwd string
---@field terminals string
---@field modes any
---@field config_options any
---@field note? string
---@field our_tool string what became of our MCP terminal tool ("" when not offered)
---@field own_shell string what became of the agent's own shell: "left out for this session", "kept: why" ("" when not looked at)
---@field replaying boolean

---@class agentrun.event.session_update
---@field key string
---@field session_id string
---@field update any the ACP SessionUpdate as JSON values

---@class agentrun.event.ssh_connected
---@field name string
---@field token integer
---@field error? string

---@class agentrun.event.terminal_activity
---@field id string
---@field waiting boolean
---@field ports integer[]
---@field last_line? string

---@class agentrun.event.terminal_created
---@field id string
---@field session string
---@field session_id string
---@field command string
---@field cwd string
---@field user boolean
---@field sandbox string
---@field title? string the description the agent gave it

---@class agentrun.event.terminal_exit
---@field id string
---@field exit_code? integer
---@field signal? string when there is no exit code
---@field ran_ms? integer
---@field last_line? string

---@class agentrun.event.terminal_released
---@field id string

---@class agentrun.event.tool_terminal
---@field key string
---@field tool_call string
---@field id string

---@class agentrun.event.turn_end
---@field key string
---@field stop_reason string
---@field error string
---@field stopped? boolean by :AgentStop

---@class agentrun.event.EarlierSession one of an agent's sessions in a session_list
---@field session_id string
---@field cwd string
---@field title? string
---@field updated_at? string

-- The tables Lua passes the backend's calls (rpc.request("start", args)):
-- one class a call that takes one, named for the call, its fields those
-- of the Go struct the handler takes (internal/editor/bridge.go's
-- handlers). TestCallsAgree checks them against Go, and every call's
-- name, arguments and table fields in the Lua code against the handlers.

---@class agentrun.request.attach
---@field cols integer the split's size
---@field rows integer
---@field scrollback integer the buffer's 'scrollback': lines replayed

---@class agentrun.request.remote_attach
---@field cols integer
---@field rows integer
---@field scrollback integer

---@class agentrun.request.check_command
---@field line string the command line, as the shell that runs it reads it
---@field allow string[] terminal.approve's rules
---@field deny string[]
---@field remembered string[] the session's remembered answers
---@field otherwise string
---@field argv string[] a command run without a shell, judged word by word
---@field dialect string "bash" for an agent's own Bash tool, "" for our terminals
---@field env string[] NAME=value the agent set

---@class agentrun.request.keep_note
---@field text string
---@field tool_call string

---@class agentrun.request.list_sessions
---@field agent string
---@field cmd string[]
---@field env string[]
---@field cwd string

---@class agentrun.request.read_files
---@field paths string[]
---@field dirs string[]

---@class agentrun.request.resume
---@field plugin_version string

---@class agentrun.request.setup
---@field kill_grace_ms? integer nil: the backend's one default
---@field byte_limit? integer nil: the backend's one default
---@field nvim_version string
---@field plugin_version string
---@field scrollback integer
---@field site string "" here, else the other machine's name
---@field id_base integer
---@field kept_bytes? integer nil: the backend's one default
---@field output_dir string
---@field linger_ms integer remote.wait_hours, for another machine's backend (0 here)

---@class agentrun.request.shell
---@field cmd string "": an interactive shell
---@field shell string
---@field cwd string

---@class agentrun.request.start
---@field agent string
---@field cmd string[]
---@field env string[]
---@field cwd string
---@field policy table config.policy()
---@field terminals string
---@field load string
---@field resume string
---@field continue boolean

---@class agentrun.request.checkpoint
---@field op string what to do ("snapshot", …: the ops of internal/checkpoint/checkpoint.go)
---@field dir string snapshot: the session's folder
---@field base string snapshot: the checkpoint folder ("": this machine's state folder's)
---@field budget integer snapshot: the copies' size budget in bytes
---@field top string the folder checkpointed (snapshot's answer)
---@field store string its own git directory outside git ("" in a git work tree)
---@field index string agentrun's index file in a git work tree
---@field a string a tree
---@field b string another tree
---@field path string a path relative to top
---@field paths string[] paths relative to top
---@field patch string[] lines of a patch (unapply)
