// claudelike.mjs: an ACP agent (official TypeScript SDK) that runs
// commands the way Claude Code does with agentrun's terminal tool: it
// starts the MCP server session/new offers (official MCP SDK client over
// stdio), announces each command as a tool_call, calls the tool with
// _meta["claudecode/toolUseId"] set to that tool call's id, and reports
// what the tool returned.
//
// Prompts: "run CMD" (wait for the end), "bg CMD" (background), "bash
// JSON" (run_command with those arguments, as a model trained on Claude
// Code's Bash sends them), "runabort MS CMD" (run_command, its call
// cancelled after MS ms), "list",
// "meta" (reports session/new's _meta and the tools offered), "state"
// (the mode and model it was set to), "enter plan" (switches itself to
// plan mode, as Claude does, and says so with current_mode_update).
//
// Like claude-agent-acp it offers modes (default, plan) and a model
// config option (sonnet, opus).
//
// AGENTRUN_TEST_STATE=DIR keeps its sessions in DIR/sessions.json, as an
// agent keeps them on disk: it then lists (session/list), loads (its
// history replayed as user and agent message chunks), resumes and closes
// them (DIR/closed.log). "say TEXT" answers TEXT; "two messages" a
// notice and an answer as two messages (messageId). "md" answers a
// thought, markdown and a tool call with 30 lines of output; "edit PATH"
// an edit of PATH shown as a diff; "askedit PATH" asks permission for
// one first and says the answer; "askrun CMD" asks permission for a
// command it runs itself and says the answer ("askargv JSON" for an argv,
// as Codex's exec; "askrunmany A ;; B" several at once, as Claude's
// parallel Bash calls).
//
// AGENTRUN_TEST_AUTH=DIR makes it want sign-in: session/new answers
// auth_required until DIR/signed-in exists. Two ways: "token"
// (authenticate) and, when the client can run it, "login": this program
// again with --login in a terminal, which asks for a code and signs in
// when the code is "ok".
import { Readable, Writable } from "node:stream";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import * as acp from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const stateDir = process.env.AGENTRUN_TEST_STATE;
const authDir = process.env.AGENTRUN_TEST_AUTH;

if (process.argv.includes("--login")) {
  // The terminal sign-in: an interactive prompt, as `claude /login` has.
  process.stdout.write(`Signing in (AGENTRUN_TEST_LOGIN=${process.env.AGENTRUN_TEST_LOGIN ?? ""})\r\nPaste your code: `);
  const rl = readline.createInterface({ input: process.stdin });
  const code = await new Promise((resolve) => rl.once("line", resolve));
  if (code.trim() !== "ok") {
    process.stdout.write("wrong code\r\n");
    process.exit(1);
  }
  fs.writeFileSync(path.join(authDir, "signed-in"), "login");
  process.stdout.write("signed in\r\n");
  process.exit(0);
}

const sessions = new Map(); // sessionId -> { mcp, meta, tools }
let calls = 0;
let terminalAuth = false;

// The sessions kept on disk: [{ sessionId, cwd, title, updatedAt, history: [{ role, text }] }].
const stored = () => (stateDir && fs.existsSync(path.join(stateDir, "sessions.json")) ? JSON.parse(fs.readFileSync(path.join(stateDir, "sessions.json"), "utf8")) : []);
const store = (list) => fs.writeFileSync(path.join(stateDir, "sessions.json"), JSON.stringify(list, null, 1));
const remember = (sessionId, cwd, role, text) => {
  if (!stateDir) return;
  const list = stored();
  let e = list.find((x) => x.sessionId === sessionId);
  if (!e) list.push((e = { sessionId, cwd, title: null, history: [] }));
  if (role === "user" && !e.title) e.title = text;
  e.history.push({ role, text });
  e.updatedAt = new Date().toISOString();
  store(list);
};
const signedIn = () => !authDir || fs.existsSync(path.join(authDir, "signed-in"));
// AGENTRUN_TEST_AUTH_AT_PROMPT: sign-in is wanted at the first prompt
// instead (as Claude Code does), not at session/new.
const atPrompt = !!process.env.AGENTRUN_TEST_AUTH_AT_PROMPT;

const app = acp.agent({ name: "agentrun-claudelike" });

app.onRequest(acp.methods.agent.initialize, ({ params }) => {
  terminalAuth = !!params.clientCapabilities?.auth?.terminal;
  // AGENTRUN_TEST_AUTH_NO_METHODS: it wants sign-in but offers no way.
  const authMethods = !authDir || process.env.AGENTRUN_TEST_AUTH_NO_METHODS
    ? []
    : [
        { id: "token", name: "API token", description: "Use the token the agent finds" },
        ...(terminalAuth ? [{ id: "login", name: "Log in", type: "terminal", args: ["--login"], env: { AGENTRUN_TEST_LOGIN: "1" } }] : []),
        { id: "key", name: "API key", type: "env_var", vars: [{ name: "CL_API_KEY", secret: true }] },
      ];
  return {
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {
      // AGENTRUN_TEST_NO_LOAD: sessions resume, without their history.
      loadSession: !!stateDir && !process.env.AGENTRUN_TEST_NO_LOAD,
      sessionCapabilities: stateDir ? { list: {}, resume: {}, close: {} } : {},
      mcpCapabilities: { http: false, sse: false },
      // AGENTRUN_TEST_NO_EMBED: an agent that takes links only (no
      // embedded text, no images).
      promptCapabilities: { embeddedContext: !process.env.AGENTRUN_TEST_NO_EMBED, image: !process.env.AGENTRUN_TEST_NO_EMBED },
    },
    // AGENTRUN_TEST_AGENT_NAME: the name it gives itself (as a real agent's).
    agentInfo: { name: process.env.AGENTRUN_TEST_AGENT_NAME || "agentrun-claudelike", version: "1" },
    authMethods,
  };
});

app.onRequest(acp.methods.agent.authenticate, ({ params }) => {
  if (params.methodId !== "token") throw new Error(`cannot authenticate with ${params.methodId}`);
  fs.writeFileSync(path.join(authDir, "signed-in"), "token");
  return {};
});

// AGENTRUN_TEST_HANG_LIST: session/list never answers (and the agent
// does not exit when its stdin closes).
app.onRequest(acp.methods.agent.session.list, ({ params }) => process.env.AGENTRUN_TEST_HANG_LIST ? new Promise(() => {}) : ({
  sessions: stored()
    .filter((e) => !params.cwd || e.cwd === params.cwd)
    .map(({ sessionId, cwd, title, updatedAt }) => ({ sessionId, cwd, title, updatedAt })),
}));

const reopen = async (params, client, replay) => {
  const e = stored().find((x) => x.sessionId === params.sessionId);
  if (!e) throw acp.RequestError.resourceNotFound(params.sessionId);
  const entry = { mcp: null, meta: params._meta ?? null, tools: [], error: null, mode: "default", model: "sonnet", cwd: params.cwd };
  sessions.set(e.sessionId, entry);
  if (replay) {
    for (const h of e.history) {
      // role "term": a command the agent ran itself, shown as codex-acp
      // and claude-agent-acp show theirs (_meta.terminal_*).
      const update =
        h.role === "term"
          ? {
              sessionUpdate: "tool_call", toolCallId: `replayed-${h.text}`, title: `echo ${h.text}`, kind: "execute", status: "completed",
              _meta: {
                terminal_info: { terminal_id: `replayed-${h.text}` },
                terminal_output: { terminal_id: `replayed-${h.text}`, data: `${h.text}\n` },
                terminal_exit: { terminal_id: `replayed-${h.text}`, exit_code: 0 },
              },
            }
          : { sessionUpdate: h.role === "user" ? "user_message_chunk" : "agent_message_chunk", content: { type: "text", text: h.text } };
      await client.notify(acp.methods.client.session.update, { sessionId: e.sessionId, update });
    }
  }
  return { modes: modes(entry), configOptions: configOptions(entry) };
};
app.onRequest(acp.methods.agent.session.load, ({ params, client }) => reopen(params, client, true));
app.onRequest(acp.methods.agent.session.resume, ({ params, client }) => reopen(params, client, false));
app.onRequest(acp.methods.agent.session.close, ({ params }) => {
  fs.appendFileSync(path.join(stateDir, "closed.log"), params.sessionId + "\n");
  return {};
});

app.onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
  if (!signedIn() && !atPrompt) throw acp.RequestError.authRequired();
  // Ids unique across processes when sessions are kept on disk.
  const id = stateDir ? `cl-${process.pid}-${sessions.size + 1}` : `cl-session-${sessions.size + 1}`;
  const entry = { mcp: null, meta: params._meta ?? null, tools: [], error: null, cwd: params.cwd };
  // AGENTRUN_TEST_REFUSE_MCP: it refuses our server (as Copilot CLI refuses stdio ones)
  const server = process.env.AGENTRUN_TEST_REFUSE_MCP ? undefined : (params.mcpServers ?? []).find((s) => s.name === "agentrun");
  if (server) {
    try {
      const env = { ...process.env };
      for (const e of server.env ?? []) env[e.name] = e.value;
      const transport = new StdioClientTransport({ command: server.command, args: server.args, env });
      const mcp = new Client({ name: "claudelike", version: "1" });
      await mcp.connect(transport);
      entry.mcp = mcp;
      entry.tools = (await mcp.listTools()).tools.map((t) => t.name);
    } catch (e) {
      entry.error = String(e && e.message ? e.message : e);
    }
  }
  entry.mode = "default";
  entry.model = "sonnet";
  sessions.set(id, entry);
  // Its slash commands, shortly after (as claude-agent-acp sends them).
  setTimeout(() => {
    client.notify(acp.methods.client.session.update, {
      sessionId: id,
      update: {
        sessionUpdate: "available_commands_update",
        availableCommands: [
          { name: "compact", description: "Summarize the conversation to save context", input: { hint: "[instructions]" } },
          { name: "context", description: "Show what fills the context" },
          { name: "review", description: "Review the current changes" },
        ],
      },
    });
  }, 50);
  return { sessionId: id, modes: modes(entry), configOptions: configOptions(entry) };
});

// AGENTRUN_TEST_MODE_AS_OPTION: the mode is a config option of category
// "mode" (as opencode offers build/plan), with no ACP modes.
const modeAsOption = !!process.env.AGENTRUN_TEST_MODE_AS_OPTION;
const modes = (s) => modeAsOption ? undefined : ({
  currentModeId: s.mode,
  availableModes: [
    { id: "default", name: "Default", description: "Ask before edits" },
    { id: "plan", name: "Plan", description: "Plan only" },
  ],
});

const configOptions = (s) => [
  ...(modeAsOption ? [{
    type: "select", id: "mode", name: "Mode", category: "mode", currentValue: s.mode ?? "default",
    options: [{ value: "default", name: "Build" }, { value: "plan", name: "Plan" }],
  }] : []),
  {
    type: "select",
    id: "model",
    name: "Model",
    category: "model",
    currentValue: s.model,
    options: [
      { value: "sonnet", name: "Sonnet" },
      { value: "opus", name: "Opus" },
      { value: "haiku-4-5", name: "Haiku 4.5" },
    ],
  },
];

app.onRequest(acp.methods.agent.session.setMode, ({ params }) => {
  const s = sessions.get(params.sessionId);
  if (!["default", "plan"].includes(params.modeId)) throw new Error(`no mode ${params.modeId}`);
  s.mode = params.modeId;
  return {};
});

app.onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => {
  const s = sessions.get(params.sessionId);
  if (modeAsOption && params.configId === "mode") s.mode = params.value;
  else if (params.configId !== "model") throw new Error(`no option ${params.configId}`);
  else s.model = params.value;
  return { configOptions: configOptions(s) };
});

// session/cancel: the turn answers "cancelled" once its tool call is
// over. Like claude-agent-acp 0.101 it cancels the MCP tool call
// (notifications/cancelled) unless AGENTRUN_TEST_CANCEL_KEEPS_TOOL is set
// (then, like 0.18–0.23, it sends nothing for the tool call).
app.onNotification(acp.methods.agent.session.cancel, ({ params }) => {
  const s = sessions.get(params.sessionId);
  if (!s) return;
  s.cancelled = true;
  if (!process.env.AGENTRUN_TEST_CANCEL_KEEPS_TOOL) s.abort?.abort();
});

app.onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
  if (!signedIn()) throw acp.RequestError.authRequired();
  const sessionId = params.sessionId;
  const s = sessions.get(sessionId);
  const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("").trim();
  s.cancelled = false;
  s.abort = new AbortController();
  const update = (u) => client.notify(acp.methods.client.session.update, { sessionId, update: u });
  const say = (line) => {
    remember(sessionId, s.cwd, "agent", line);
    return update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: line + "\n" } });
  };
  remember(sessionId, s.cwd, "user", text);

  if (text === "md") {
    // A thought, then markdown in small chunks (a fence split across
    // them), then a tool call with long output.
    for (const t of ["Let me think", " about this.\nSecond thought line.\nThird thought line.\n"]) {
      await update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: t } });
    }
    const md = "# Plan of attack\n\nSome **bold words** and `inline code` and *slanted* text.\n\n```lua\nlocal answer = 42\nreturn answer\n```\n- first item\n- second item\nSee [the docs](https://example.com/docs).\n";
    for (let i = 0; i < md.length; i += 7) {
      await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: md.slice(i, i + 7) } });
    }
    const out = Array.from({ length: 30 }, (_, i) => `output line ${i + 1}`).join("\n") + "\n";
    await update({ sessionUpdate: "tool_call", toolCallId: "long-1", title: "long output", kind: "read", status: "completed", content: [{ type: "content", content: { type: "text", text: out } }] });
    await say("done with md");
    return { stopReason: "end_turn" };
  }
  if (text.startsWith("askedit ")) {
    // An edit it asks permission for first, as Claude Code does in its
    // default mode; it reports the answer.
    const path = text.slice(8);
    const toolCall = {
      toolCallId: "askedit-1", title: `Edit ${path}`, kind: "edit", status: "pending",
      content: [{ type: "diff", path, oldText: "a\nold\n", newText: "a\nnew\n" }],
    };
    await update({ sessionUpdate: "tool_call", ...toolCall });
    const res = await client.request(acp.methods.client.session.requestPermission, {
      sessionId,
      toolCall,
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    await say(`PERMISSION ${res.outcome.outcome === "selected" ? res.outcome.optionId : res.outcome.outcome}`);
    return { stopReason: "end_turn" };
  }
  if (text.startsWith("askrunmany ")) {
    // Several commands at once, each asked (Claude's parallel Bash
    // calls): "askrunmany A ;; B ;; C"; it says every answer in one line.
    const permissionOptions = [
      { optionId: "always", name: "Always Allow", kind: "allow_always" },
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ];
    const answers = await Promise.all(text.slice(11).split(" ;; ").map(async (command) => {
      const toolCall = { toolCallId: `askrun-${++calls}`, title: command, kind: "execute", status: "pending", rawInput: { command } };
      await update({ sessionUpdate: "tool_call", ...toolCall });
      const res = await client.request(acp.methods.client.session.requestPermission, { sessionId, toolCall, options: permissionOptions });
      return `${command}: ${res.outcome.outcome === "selected" ? res.outcome.optionId : res.outcome.outcome}`;
    }));
    await say(`PERMISSIONS ${answers.join(" | ")}`);
    return { stopReason: "end_turn" };
  }
  if (text.startsWith("askrun ") || text.startsWith("askargv ")) {
    // A command it runs itself and asks permission for first, as Claude
    // Code's Bash (a line) and Codex's exec (askargv JSON: an argv) do;
    // it reports the answer.
    const command = text.startsWith("askargv ") ? JSON.parse(text.slice(8)) : text.slice(7);
    const title = Array.isArray(command) ? command.join(" ") : command; // Codex's title is the argv joined
    const toolCall = { toolCallId: `askrun-${++calls}`, title, kind: "execute", status: "pending", rawInput: { command } };
    await update({ sessionUpdate: "tool_call", ...toolCall });
    const res = await client.request(acp.methods.client.session.requestPermission, {
      sessionId,
      toolCall,
      options: [
        { optionId: "always", name: "Always Allow", kind: "allow_always" },
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    await say(`PERMISSION ${title}: ${res.outcome.outcome === "selected" ? res.outcome.optionId : res.outcome.outcome}`);
    return { stopReason: "end_turn" };
  }
  if (text.startsWith("edit ")) {
    // An edit, as Claude Code's Edit tool shows one: a diff of the file.
    const path = text.slice(5);
    await update({
      sessionUpdate: "tool_call", toolCallId: "edit-1", title: `Edit ${path}`, kind: "edit", status: "completed",
      content: [{ type: "diff", path, oldText: "package main\n\nfunc main() {\n\tprintln(\"old\")\n}\n", newText: "package main\n\nfunc main() {\n\tprintln(\"new\")\n}\n" }],
    });
    await say("edited");
    return { stopReason: "end_turn" };
  }
  if (text === "two messages") {
    // A notice, then the answer: two messages (messageId tells them
    // apart), the first without a line end, as Claude's usage notice.
    await update({ sessionUpdate: "agent_message_chunk", messageId: "notice-1", content: { type: "text", text: "Notice: you are near your usage limit." } });
    await update({ sessionUpdate: "agent_message_chunk", messageId: "answer-1", content: { type: "text", text: "The answer" } });
    await update({ sessionUpdate: "agent_message_chunk", messageId: "answer-1", content: { type: "text", text: " is 42." } });
    return { stopReason: "end_turn" };
  }
  if (text.startsWith("say ")) {
    await say(text.slice(4));
    return { stopReason: "end_turn" };
  }
  if (text.startsWith("ctx")) {
    // What came besides the text: "resource(uri,bytes,mime,first line)",
    // "resource_link(uri)" or "image(mime,bytes,uri)".
    const parts = params.prompt.filter((b) => b.type !== "text").map((b) => {
      if (b.type === "resource") {
        const r = b.resource;
        return `resource(${r.uri},${r.text.length},${r.mimeType ?? ""},${r.text.split("\n")[0]})`;
      }
      if (b.type === "resource_link") return `resource_link(${b.uri})`;
      if (b.type === "image") return `image(${b.mimeType},${Buffer.from(b.data, "base64").length},${b.uri ?? ""})`;
      return b.type;
    });
    await say(`BLOCKS ${parts.join(" ")}`);
    return { stopReason: "end_turn" };
  }
  if (text.startsWith("title ")) {
    // as Claude 0.101 names a session once it knows what it is about
    await update({ sessionUpdate: "session_info_update", title: text.slice(6), updatedAt: new Date().toISOString() });
    await say("titled");
    return { stopReason: "end_turn" };
  }
  if (text === "state") {
    await say(`STATE mode=${s.mode} model=${s.model}`);
    return { stopReason: "end_turn" };
  }
  if (text === "enter plan") {
    s.mode = "plan";
    await update({ sessionUpdate: "current_mode_update", currentModeId: "plan" });
    await say("entered plan mode");
    return { stopReason: "end_turn" };
  }
  if (text === "meta") {
    await say(`META ${JSON.stringify(s.meta)} TOOLS ${s.tools.join(",")} ERROR ${s.error ?? ""}`);
    return { stopReason: "end_turn" };
  }
  if (!s.mcp) {
    await say(`NO TOOL: ${s.error ?? "session/new offered no agentrun MCP server"}`);
    return { stopReason: "end_turn" };
  }
  let tool = "run_command";
  let args = {};
  if (text.startsWith("run ")) args = { command: text.slice(4) };
  else if (text.startsWith("bash ")) args = JSON.parse(text.slice(5)); // the arguments as Claude Code's Bash takes them
  else if (text.startsWith("runabort ")) {
    // run_command, whose call it cancels itself after MS ms (as Claude Code
    // cancels a tool call): "runabort MS CMD".
    const [, ms, command] = text.match(/^runabort (\d+) (.*)$/);
    args = { command };
    setTimeout(() => s.abort.abort(), Number(ms));
  }
  else if (text.startsWith("bg ")) args = { command: text.slice(3), background: true };
  else if (text === "list") tool = "list_commands";
  else {
    await say(`unknown prompt ${text}`);
    return { stopReason: "end_turn" };
  }
  const toolCallId = `toolu_${++calls}`;
  // as Claude Code does: the tool call names the MCP tool in _meta.claudeCode
  await update({ sessionUpdate: "tool_call", toolCallId, title: args.command ?? tool, kind: "execute", status: "in_progress", rawInput: args, _meta: { claudeCode: { toolName: `mcp__agentrun__${tool}` } } });
  let result;
  try {
    result = await s.mcp.callTool({ name: tool, arguments: args, _meta: { "claudecode/toolUseId": toolCallId } }, undefined, { timeout: 600000, signal: s.abort.signal });
  } catch (e) {
    if (s.cancelled) {
      await update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
      return { stopReason: "cancelled" };
    }
    if (s.abort.signal.aborted) {
      await update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
      await say("ABORTED the tool call");
      return { stopReason: "end_turn" };
    }
    await update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
    await say(`TOOL ERROR ${e && e.message ? e.message : e}`);
    return { stopReason: "end_turn" };
  }
  const out = (result.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
  if (s.cancelled) {
    await update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: [{ type: "content", content: { type: "text", text: out } }] });
    await say(`CANCELLED AFTER ${out}`);
    return { stopReason: "cancelled" };
  }
  await update({
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: result.isError ? "failed" : "completed",
    content: [{ type: "content", content: { type: "text", text: out } }],
  });
  await say(`RESULT ${result.isError ? "error " : ""}${out}`);
  return { stopReason: "end_turn" };
});

const input = Readable.toWeb(process.stdin);
const output = Writable.toWeb(process.stdout);
const conn = app.connect(acp.ndJsonStream(output, input));
await conn.closed;
// Like claude-agent-acp, it then stays until it is signalled.
if (process.env.AGENTRUN_TEST_HANG_LIST) setInterval(() => {}, 1000);
for (const s of sessions.values()) if (s.mcp) await s.mcp.close().catch(() => {});
