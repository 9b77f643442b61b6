// claudelike.mjs: an ACP agent (official TypeScript SDK) that runs
// commands the way Claude Code does with agentrun's terminal tool: it
// starts the MCP server session/new offers (official MCP SDK client over
// stdio), announces each command as a tool_call, calls the tool with
// _meta["claudecode/toolUseId"] set to that tool call's id, and reports
// what the tool returned.
//
// Prompts: "run CMD" (wait for the end), "bg CMD" (background), "list",
// "meta" (reports session/new's _meta and the tools offered), "state"
// (the mode and model it was set to), "enter plan" (switches itself to
// plan mode, as Claude does, and says so with current_mode_update).
//
// Like claude-agent-acp it offers modes (default, plan) and a model
// config option (sonnet, opus).
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const sessions = new Map(); // sessionId -> { mcp, meta, tools }
let calls = 0;

const app = acp.agent({ name: "agentrun-claudelike" });

app.onRequest(acp.methods.agent.initialize, () => ({
  protocolVersion: acp.PROTOCOL_VERSION,
  agentCapabilities: {
    loadSession: false,
    mcpCapabilities: { http: false, sse: false },
    // AGENTRUN_TEST_NO_EMBED: an agent that takes links only.
    promptCapabilities: { embeddedContext: !process.env.AGENTRUN_TEST_NO_EMBED, image: false },
  },
  agentInfo: { name: "agentrun-claudelike", version: "1" },
  authMethods: [],
}));

app.onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
  const id = `cl-session-${sessions.size + 1}`;
  const entry = { mcp: null, meta: params._meta ?? null, tools: [], error: null };
  const server = (params.mcpServers ?? []).find((s) => s.name === "agentrun");
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

const modes = (s) => ({
  currentModeId: s.mode,
  availableModes: [
    { id: "default", name: "Default", description: "Ask before edits" },
    { id: "plan", name: "Plan", description: "Plan only" },
  ],
});

const configOptions = (s) => [
  {
    type: "select",
    id: "model",
    name: "Model",
    category: "model",
    currentValue: s.model,
    options: [
      { value: "sonnet", name: "Sonnet" },
      { value: "opus", name: "Opus" },
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
  if (params.configId !== "model") throw new Error(`no option ${params.configId}`);
  s.model = params.value;
  return { configOptions: configOptions(s) };
});

app.onNotification(acp.methods.agent.session.cancel, () => {});

app.onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
  const sessionId = params.sessionId;
  const s = sessions.get(sessionId);
  const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("").trim();
  const update = (u) => client.notify(acp.methods.client.session.update, { sessionId, update: u });
  const say = (line) => update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: line + "\n" } });

  if (text.startsWith("ctx")) {
    // What came besides the text: "resource(uri,bytes,mime,first line)"
    // or "resource_link(uri)".
    const parts = params.prompt.filter((b) => b.type !== "text").map((b) => {
      if (b.type === "resource") {
        const r = b.resource;
        return `resource(${r.uri},${r.text.length},${r.mimeType ?? ""},${r.text.split("\n")[0]})`;
      }
      if (b.type === "resource_link") return `resource_link(${b.uri})`;
      return b.type;
    });
    await say(`BLOCKS ${parts.join(" ")}`);
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
  else if (text.startsWith("bg ")) args = { command: text.slice(3), background: true };
  else if (text === "list") tool = "list_commands";
  else {
    await say(`unknown prompt ${text}`);
    return { stopReason: "end_turn" };
  }
  const toolCallId = `toolu_${++calls}`;
  await update({ sessionUpdate: "tool_call", toolCallId, title: args.command ?? tool, kind: "execute", status: "in_progress", rawInput: args });
  let result;
  try {
    result = await s.mcp.callTool({ name: tool, arguments: args, _meta: { "claudecode/toolUseId": toolCallId } }, undefined, { timeout: 600000 });
  } catch (e) {
    await update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
    await say(`TOOL ERROR ${e && e.message ? e.message : e}`);
    return { stopReason: "end_turn" };
  }
  const out = (result.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
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
for (const s of sessions.values()) if (s.mcp) await s.mcp.close().catch(() => {});
