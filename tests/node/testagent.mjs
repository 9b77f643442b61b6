// testagent.mjs: an ACP agent written with the official TypeScript SDK that
// drives every terminal method against the client over stdio and checks the
// wire shapes itself (the SDK does not validate responses).
//
// On each prompt it runs all checks and reports one agent_message_chunk per
// check, "PASS name" or "FAIL name: detail", then "SUMMARY passed=N
// failed=M", and ends the turn. A prompt "only NAME[,NAME]" runs just those.
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const sessions = new Map(); // sessionId -> cwd
let clientCaps = null;

const app = acp.agent({ name: "agentrun-ts-testagent" });

app.onRequest(acp.methods.agent.initialize, ({ params }) => {
  clientCaps = params.clientCapabilities ?? null;
  return {
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: "agentrun-ts-testagent", version: "1" },
    authMethods: [],
  };
});

app.onRequest(acp.methods.agent.session.new, ({ params }) => {
  const id = `ts-session-${sessions.size + 1}`;
  sessions.set(id, params.cwd);
  return { sessionId: id };
});

app.onNotification(acp.methods.agent.session.cancel, () => {});

app.onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
  const sessionId = params.sessionId;
  const cwd = sessions.get(sessionId);
  const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("").trim();
  let only = null;
  if (text.startsWith("only ")) only = new Set(text.slice(5).split(",").map((s) => s.trim()));

  const say = (line) =>
    client.notify(acp.methods.client.session.update, {
      sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: line + "\n" } },
    });
  const t = new Tester(client, sessionId, cwd);
  let passed = 0;
  let failed = 0;
  for (const [name, fn] of checks) {
    if (only && !only.has(name)) continue;
    try {
      await withTimeout(fn(t), 20000, `${name} timed out`);
      passed++;
      await say(`PASS ${name}`);
    } catch (e) {
      failed++;
      await say(`FAIL ${name}: ${e && e.message ? e.message : String(e)}`);
    } finally {
      await t.cleanup();
    }
  }
  await say(`SUMMARY passed=${passed} failed=${failed}`);
  return { stopReason: "end_turn" };
});

// Tester wraps the raw terminal requests and remembers terminals to release.
class Tester {
  constructor(client, sessionId, cwd) {
    this.client = client;
    this.sessionId = sessionId;
    this.cwd = cwd;
    this.open = new Set();
  }
  req(method, params) {
    return this.client.request(method, { sessionId: this.sessionId, ...params });
  }
  async create(params) {
    const res = await this.req("terminal/create", params);
    check(res && typeof res.terminalId === "string" && res.terminalId.length > 0, `create returned ${js(res)}`);
    this.open.add(res.terminalId);
    return res.terminalId;
  }
  output(terminalId) {
    return this.req("terminal/output", { terminalId });
  }
  wait(terminalId) {
    return this.req("terminal/wait_for_exit", { terminalId });
  }
  kill(terminalId) {
    return this.req("terminal/kill", { terminalId });
  }
  async release(terminalId) {
    this.open.delete(terminalId);
    return this.req("terminal/release", { terminalId });
  }
  // run creates a terminal, waits for it and returns its final output.
  async run(params) {
    const id = await this.create({ cwd: this.cwd, ...params });
    const exit = await this.wait(id);
    const out = await this.output(id);
    await this.release(id);
    return { exit, out };
  }
  // fails calls fn and returns the RequestError it must throw.
  async fails(fn, what) {
    try {
      const res = await fn();
      throw new Error(`${what}: expected an error, got ${js(res)}`);
    } catch (e) {
      if (typeof e?.code !== "number") throw e;
      return e;
    }
  }
  async cleanup() {
    for (const id of [...this.open]) {
      this.open.delete(id);
      try {
        await this.req("terminal/release", { terminalId: id });
      } catch {}
    }
  }
}

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}
function js(v) {
  return JSON.stringify(v);
}
function eq(got, want, what) {
  check(js(got) === js(want), `${what}: got ${js(got)}, want ${js(want)}`);
}
function keys(obj) {
  return Object.keys(obj ?? {}).filter((k) => k !== "_meta").sort();
}
function withTimeout(p, ms, msg) {
  let timer;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(msg)), ms))),
  ]);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ours checks that a -32602 came from the client over the wire (our
// client puts the method in error.data), not from the SDK's own checks.
function ours(e, what) {
  eq(e.code, -32602, `${what} code`);
  eq(e.data?.method, "terminal/create", `${what} error.data.method`);
}

// checkFlatExit checks wait_for_exit's flat {exitCode, signal}, both keys
// present.
function checkFlatExit(res, code, signal, what) {
  eq(keys(res), ["exitCode", "signal"], `${what} keys`);
  check(res.exitCode === code, `${what}: exitCode ${js(res.exitCode)}, want ${js(code)}`);
  check(res.signal === signal, `${what}: signal ${js(res.signal)}, want ${js(signal)}`);
}

// checkOutputShape checks terminal/output's {output, truncated, exitStatus?}.
function checkOutputShape(res, exited, what) {
  check(typeof res.output === "string", `${what}: output is ${typeof res.output}`);
  check(typeof res.truncated === "boolean", `${what}: truncated is ${typeof res.truncated}`);
  if (exited) {
    eq(keys(res), ["exitStatus", "output", "truncated"], `${what} keys`);
    eq(keys(res.exitStatus), ["exitCode", "signal"], `${what} exitStatus keys`);
  } else {
    eq(keys(res), ["output", "truncated"], `${what} keys (no exitStatus while running)`);
  }
}

const checks = [
  [
    "capabilities",
    async () => {
      check(clientCaps?.terminal === true, `clientCapabilities.terminal = ${js(clientCaps?.terminal)}`);
      check(clientCaps?.fs?.readTextFile === true && clientCaps?.fs?.writeTextFile === true, `fs = ${js(clientCaps?.fs)}`);
      check(clientCaps?._meta?.terminal_output === true, `_meta = ${js(clientCaps?._meta)}`);
    },
  ],
  [
    "create_returns_promptly",
    async (t) => {
      const start = Date.now();
      const id = await t.create({ command: "sleep 3" });
      const took = Date.now() - start;
      check(took < 1500, `create took ${took}ms for a 3s command`);
      await t.release(id);
    },
  ],
  [
    "output_while_running",
    async (t) => {
      const id = await t.create({ command: "echo started; sleep 30" });
      let res;
      for (let i = 0; i < 100; i++) {
        res = await t.output(id);
        checkOutputShape(res, false, "output while running");
        if (res.output.includes("started")) break;
        await sleep(50);
      }
      eq(res.output, "started\n", "output while running");
      eq(res.truncated, false, "truncated");
    },
  ],
  [
    "wait_for_exit_flat",
    async (t) => {
      const id = await t.create({ command: "echo hi" });
      checkFlatExit(await t.wait(id), 0, null, "wait_for_exit");
    },
  ],
  [
    "exit_code_nonzero",
    async (t) => {
      const { exit, out } = await t.run({ command: "echo failing; exit 3" });
      checkFlatExit(exit, 3, null, "wait_for_exit");
      checkOutputShape(out, true, "output after exit");
      eq(out.exitStatus, { exitCode: 3, signal: null }, "exitStatus");
    },
  ],
  [
    "output_after_exit_nested",
    async (t) => {
      const id = await t.create({ command: "echo one; echo two" });
      await t.wait(id);
      const res = await t.output(id);
      checkOutputShape(res, true, "output after exit");
      eq(res.exitStatus, { exitCode: 0, signal: null }, "exitStatus");
      eq(res.output, "one\ntwo\n", "output");
      eq(res.truncated, false, "truncated");
    },
  ],
  [
    "rendered_text",
    async (t) => {
      const { out } = await t.run({ command: "printf 'loading 10%%\\rloading 100%%\\n\\033[31mred\\033[0m\\n'" });
      eq(out.output, "loading 100%\nred\n", "rendered output (\\r redraw collapsed, colours stripped)");
    },
  ],
  [
    "byte_limit_tail",
    async (t) => {
      const { out } = await t.run({ command: "printf", args: ["%s", "0123456789abcdefghij"], outputByteLimit: 5 });
      eq(out.output, "fghij", "tail within 5 bytes");
      eq(out.truncated, true, "truncated");
      const small = await t.run({ command: "printf", args: ["%s", "abc"], outputByteLimit: 5 });
      eq(small.out.output, "abc", "output under the limit");
      eq(small.out.truncated, false, "truncated under the limit");
    },
  ],
  [
    "byte_limit_utf8_boundary",
    async (t) => {
      // "ééé" is 6 bytes; a 3-byte tail must not split a character.
      const { out } = await t.run({ command: "printf", args: ["%s", "ééé"], outputByteLimit: 3 });
      eq(out.output, "é", "tail cut at a character boundary");
      eq(out.truncated, true, "truncated");
    },
  ],
  [
    "byte_limit_zero",
    async (t) => {
      const { out } = await t.run({ command: "echo", args: ["something"], outputByteLimit: 0 });
      eq(out.output, "", "output with limit 0");
      eq(out.truncated, true, "truncated with limit 0");
    },
  ],
  [
    "kill_sigterm_stays_valid",
    async (t) => {
      const id = await t.create({ command: "sleep 30" });
      const killed = await t.kill(id);
      check(killed === null || killed === undefined || keys(killed).length === 0, `kill returned ${js(killed)}`);
      checkFlatExit(await t.wait(id), null, "SIGTERM", "wait after kill");
      const res = await t.output(id);
      checkOutputShape(res, true, "output after kill");
      eq(res.exitStatus, { exitCode: null, signal: "SIGTERM" }, "exitStatus after kill");
      await t.kill(id); // killing an exited terminal is fine
    },
  ],
  [
    "two_waiters",
    async (t) => {
      const id = await t.create({ command: "sleep 0.3; exit 4" });
      const [a, b] = await Promise.all([t.wait(id), t.wait(id)]);
      checkFlatExit(a, 4, null, "first waiter");
      checkFlatExit(b, 4, null, "second waiter");
    },
  ],
  [
    "release_answers_pending_wait",
    async (t) => {
      const id = await t.create({ command: "sleep 30" });
      const waiting = t.wait(id);
      await sleep(100);
      const rel = await t.release(id);
      check(rel === null || rel === undefined || keys(rel).length === 0, `release returned ${js(rel)}`);
      let res;
      try {
        res = await withTimeout(waiting, 10000, "wait_for_exit still pending 10s after release");
      } catch (e) {
        if (typeof e?.code !== "number") throw e;
        return; // an error answer is an answer too
      }
      check(res.exitCode === null && typeof res.signal === "string", `wait after release: ${js(res)}`);
    },
  ],
  [
    "release_then_error",
    async (t) => {
      const id = await t.create({ command: "echo bye" });
      await t.wait(id);
      await t.release(id);
      for (const method of ["terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release"]) {
        const e = await t.fails(() => t.req(method, { terminalId: id }), `${method} after release`);
        check(e.message.includes(`unknown terminal "${id}"`), `${method} after release: message ${js(e.message)}`);
      }
    },
  ],
  [
    "unknown_terminal",
    async (t) => {
      const e = await t.fails(() => t.output("no-such-terminal"), "output of an unknown id");
      check(e.message.includes('unknown terminal "no-such-terminal"'), `message ${js(e.message)}`);
      // the client keeps working
      const { exit } = await t.run({ command: "true" });
      checkFlatExit(exit, 0, null, "after the error");
    },
  ],
  [
    "relative_cwd",
    async (t) => {
      const e = await t.fails(() => t.create({ command: "true", cwd: "relative/dir" }), "create with a relative cwd");
      ours(e, "relative cwd");
      check(e.message.includes("relative/dir"), `message does not name the cwd: ${js(e.message)}`);
    },
  ],
  [
    "default_cwd_is_session_cwd",
    async (t) => {
      const id = await t.create({ command: "pwd" });
      await t.wait(id);
      const res = await t.output(id);
      eq(res.output, t.cwd + "\n", "pwd without cwd");
    },
  ],
  [
    "bad_params",
    async (t) => {
      let e = await t.fails(() => t.create({ command: "true", outputByteLimit: -1 }), "negative outputByteLimit");
      ours(e, "negative outputByteLimit");
      check(e.message.includes("outputByteLimit"), `message ${js(e.message)}`);
      e = await t.fails(() => t.create({ command: "true", outputByteLimit: 4 * 1024 * 1024 * 1024 }), "4 GiB outputByteLimit");
      ours(e, "absurd outputByteLimit");
      check(e.message.includes("outputByteLimit"), `message ${js(e.message)}`);
      e = await t.fails(() => t.create({ command: "true", env: [{ name: "", value: "x" }] }), "env entry without name");
      ours(e, "empty env name");
      check(e.message.includes("env[0]"), `message ${js(e.message)}`);
      e = await t.fails(() => t.create({ command: "true", outputByteLimit: "big" }), "outputByteLimit of the wrong type");
      ours(e, "wrong type");
      check(e.message.includes("outputByteLimit"), `message ${js(e.message)}`);
    },
  ],
  [
    "command_not_found",
    async (t) => {
      const e = await t.fails(
        () => t.create({ command: "agentrun-no-such-command", args: ["x"] }),
        "create of a missing command",
      );
      check(e.message.includes("agentrun-no-such-command") && e.message.includes("not found"), `message ${js(e.message)}`);
    },
  ],
  [
    "args_exec_no_shell",
    async (t) => {
      const { out } = await t.run({ command: "echo", args: ["a;b", "$HOME", "*"] });
      eq(out.output, "a;b $HOME *\n", "args passed verbatim");
    },
  ],
  [
    "shell_line_without_args",
    async (t) => {
      const { out } = await t.run({ command: "echo a; echo b | tr b c" });
      eq(out.output, "a\nc\n", "shell line");
    },
  ],
  [
    "env_entry_visible",
    async (t) => {
      const { out } = await t.run({
        command: "printenv",
        args: ["AGENTRUN_TEST_VAR", "PAGER", "GIT_TERMINAL_PROMPT"],
        env: [{ name: "AGENTRUN_TEST_VAR", value: "hello env" }],
      });
      eq(out.output, "hello env\ncat\n0\n", "env entry and defaults");
      const over = await t.run({ command: "printenv", args: ["PAGER"], env: [{ name: "PAGER", value: "less" }] });
      eq(over.out.output, "less\n", "agent entry over the default");
    },
  ],
];

const input = Readable.toWeb(process.stdin);
const output = Writable.toWeb(process.stdout);
const conn = app.connect(acp.ndJsonStream(output, input));
await conn.closed;
