// askagent.mjs: an ACP agent on the official TypeScript SDK that asks the
// user through elicitation, as claude-agent-acp's AskUserQuestion and its
// MCP sign-in do. Prompts:
//   caps          say what the client offers (CAPS {form, url})
//   form          a form of every field kind; say the answer (ANSWER {...})
//   url URL       ask to open URL; on accept say so and complete it
//   withdraw      ask a form, then withdraw it ($/cancel_request)
//   notice, slow  two messages without ids 2 s apart; one sentence paused
//                 2 s mid-word
// Each answer is said as one agent_message_chunk "ANSWER <json>".
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

let caps = null;
let n = 0;
const app = acp.agent({ name: "agentrun-askagent" });

app.onRequest(acp.methods.agent.initialize, ({ params }) => {
  caps = params.clientCapabilities ?? null;
  return {
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: "agentrun-askagent", version: "1" },
    authMethods: [],
  };
});

app.onRequest(acp.methods.agent.session.new, () => ({ sessionId: `ask-${++n}` }));
app.onNotification(acp.methods.agent.session.cancel, () => {});

const form = {
  type: "object",
  properties: {
    colour: { type: "string", title: "Colour", oneOf: [{ const: "red", title: "Red" }, { const: "green", title: "Green" }] },
    sure: { type: "boolean", title: "Sure" },
    count: { type: "integer", title: "How many", minimum: 1, maximum: 5 },
    note: { type: "string", title: "Note", maxLength: 20 },
    langs: { type: "array", title: "Languages", items: { anyOf: [{ const: "go", title: "Go" }, { const: "lua", title: "Lua" }, { const: "ts", title: "TypeScript" }] }, minItems: 1 },
  },
  required: ["colour", "count"],
};

app.onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
  const sessionId = params.sessionId;
  const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("").trim();
  const say = (line) =>
    client.notify(acp.methods.client.session.update, {
      sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: line + "\n" } },
    });
  try {
    if (text === "caps") {
      await say("CAPS " + JSON.stringify(caps?.elicitation ?? null));
    } else if (text === "form") {
      const r = await client.request(acp.methods.client.elicitation.create, {
        sessionId,
        mode: "form",
        message: "A few questions",
        requestedSchema: form,
      });
      await say("ANSWER " + JSON.stringify(r));
    } else if (text === "notice" || text === "slow") {
      // two messages without ids, a pause between (notice: after a
      // finished sentence), or one sentence paused in the middle (slow)
      const first = text === "notice" ? "Notice: you are near your usage limit." : "The ans";
      const second = text === "notice" ? "The answer is 42." : "wer is 42.";
      await client.notify(acp.methods.client.session.update, { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: first } } });
      await new Promise((r) => setTimeout(r, 2000));
      await client.notify(acp.methods.client.session.update, { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: second } } });
    } else if (text === "withdraw") {
      // asks, then withdraws the question ($/cancel_request) after a moment
      const abort = new AbortController();
      setTimeout(() => abort.abort(), 500);
      try {
        const r = await client.request(acp.methods.client.elicitation.create, { sessionId, mode: "form", message: "Soon withdrawn", requestedSchema: form }, { cancellationSignal: abort.signal });
        await say("ANSWER " + JSON.stringify(r));
      } catch (e) {
        await say("WITHDRAWN " + (e && e.message ? e.message : String(e)));
      }
    } else if (text.startsWith("url ")) {
      const url = text.slice(4).trim();
      const r = await client.request(acp.methods.client.elicitation.create, {
        sessionId,
        mode: "url",
        message: "Sign in to the test service",
        url,
        elicitationId: "el-1",
      });
      await say("ANSWER " + JSON.stringify(r));
      if (r.action === "accept") {
        await client.notify(acp.methods.client.elicitation.complete, { elicitationId: "el-1" });
      }
    } else {
      await say("say caps, form or url URL");
    }
  } catch (e) {
    await say("ERROR " + (e && e.message ? e.message : String(e)));
  }
  return { stopReason: "end_turn" };
});

const input = Readable.toWeb(process.stdin);
const output = Writable.toWeb(process.stdout);
const conn = app.connect(acp.ndJsonStream(output, input));
await conn.closed;
