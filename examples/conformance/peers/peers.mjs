#!/usr/bin/env node
// JavaScript context managers (the study's JS peers) run by vista-lab's conformance suite as a
// process: `node peers.mjs PEER`, speaking the JSON-lines protocol of docs/guide/conformance.md
// ("Managers in any language"). Each peer is the npm package's own trimming function at the
// settings named below; this file only converts OpenAI chat messages into the package's types and
// back (a message the package passes through unchanged is returned as the original input dict,
// so a lossy conversion back can never show up as a fidelity violation).
// Install the packages next to this file: npm ci --prefix <this folder> (package-lock.json pins
// them). Nothing reaches the network.
//
//   langchainjs-last            @langchain/core trimMessages(strategy "last"), counting with the suite
//   langchainjs-last-system     ... includeSystem: true, startOn: "human"
//   langchainjs-first           ... strategy "first"
//   ai-prune-tool-calls         ai pruneMessages(toolCalls "before-last-K-messages"), largest K that fits
//   llamaindexjs-chat-memory    @llamaindex/core ChatMemoryBuffer({tokenLimit}).getMessages()
//   openai-agentsjs-session     @openai/agents-core MemorySession getItems(K), largest K that fits
//                               (OpenAI Responses items)
import { createInterface } from "node:readline";

const PEER = process.argv[2];
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const queue = [];
const waiting = [];
lines.on("line", (line) => (waiting.length ? waiting.shift()(line) : queue.push(line)));
lines.on("close", () => { while (waiting.length) waiting.shift()(null); });
const nextLine = () => new Promise((resolve) =>
  queue.length ? resolve(queue.shift()) : waiting.push(resolve));
const send = (doc) => process.stdout.write(JSON.stringify(doc) + "\n");

// The suite's token count of an OpenAI request (asked over the pipe).
async function count(request) {
  send({ type: "count", request });
  const line = await nextLine();
  if (line === null) throw new Error("the suite closed the pipe");
  const answer = JSON.parse(line);
  if (answer.type !== "tokens") throw new Error(`the suite could not count: ${answer.message}`);
  return answer.tokens;
}

const textOf = (content) => content == null ? "" : typeof content === "string" ? content
  : content.filter((p) => p && p.type === "text").map((p) => p.text ?? "").join("\n");

// ------------------------------------------------------------------ @langchain/core

async function langchain(conversation, budget, options) {
  const { SystemMessage, HumanMessage, AIMessage, ToolMessage, trimMessages } =
    await import("@langchain/core/messages");
  const byId = new Map();
  const lc = conversation.map((m, i) => {
    const id = `vista-${i}`;
    byId.set(id, m);
    const content = m.content ?? "";
    if (m.role === "system") return new SystemMessage({ content, id });
    if (m.role === "user") return new HumanMessage({ content, id });
    if (m.role === "tool") return new ToolMessage({ content, id, tool_call_id: m.tool_call_id });
    const calls = (m.tool_calls ?? []).map((tc) => {
      let args = {};
      try { args = JSON.parse(tc.function?.arguments ?? "{}"); } catch { args = {}; }
      return { id: tc.id, name: tc.function?.name ?? "", args, type: "tool_call" };
    });
    return new AIMessage({ content, id, tool_calls: calls });
  });
  // A message langchain kept as it was is its original dict; one it copied with shortened
  // content (allowPartial keeps the id) is the original dict with langchain's content.
  const back = (msg) => {
    // trimMessages can hand back a hole (undefined) in its array: shown as null, as it is
    if (msg == null) return null;
    const orig = byId.get(msg.id);
    if (orig === undefined) return { role: "user", content: textOf(msg.content) };
    return msg.content === (orig.content ?? "") ? orig : { ...orig, content: msg.content };
  };
  const out = await trimMessages(lc, {
    maxTokens: budget, tokenCounter: (msgs) => count(msgs.map(back)), ...options,
  });
  return out.map(back);
}

// ------------------------------------------------------------------ ai (Vercel AI SDK)

function toModelMessages(conversation) {
  const names = new Map();
  return conversation.map((m) => {
    if (m.role === "system") return { role: "system", content: textOf(m.content) };
    if (m.role === "user") return { role: "user", content: [{ type: "text", text: textOf(m.content) }] };
    if (m.role === "tool") {
      return { role: "tool", content: [{ type: "tool-result", toolCallId: m.tool_call_id,
        toolName: names.get(m.tool_call_id) ?? "", output: { type: "text", value: textOf(m.content) } }] };
    }
    const parts = [];
    if (textOf(m.content)) parts.push({ type: "text", text: textOf(m.content) });
    for (const tc of m.tool_calls ?? []) {
      names.set(tc.id, tc.function?.name ?? "");
      let input = {};
      try { input = JSON.parse(tc.function?.arguments ?? "{}"); } catch { input = {}; }
      parts.push({ type: "tool-call", toolCallId: tc.id, toolName: tc.function?.name ?? "", input });
    }
    return { role: "assistant", content: parts };
  });
}

function fromModelMessage(m) {
  if (m.role === "tool") {
    return m.content.map((p) => ({ role: "tool", tool_call_id: p.toolCallId,
      content: p.output?.value ?? JSON.stringify(p.output) }));
  }
  if (m.role === "assistant") {
    const text = m.content.filter((p) => p.type === "text").map((p) => p.text).join("");
    const calls = m.content.filter((p) => p.type === "tool-call").map((p) => ({ id: p.toolCallId,
      type: "function", function: { name: p.toolName, arguments: JSON.stringify(p.input) } }));
    return [calls.length ? { role: "assistant", content: text || null, tool_calls: calls }
      : { role: "assistant", content: text }];
  }
  return [{ role: m.role, content: textOf(m.content) }];
}

async function aiPrune(conversation, budget) {
  const { pruneMessages } = await import("ai");
  const model = toModelMessages(conversation);
  const back = new Map(model.map((mm, i) => [mm, conversation[i]]));
  const render = (msgs) => msgs.flatMap((mm) => back.has(mm) ? [back.get(mm)] : fromModelMessage(mm));
  let last = conversation;
  // the user who picks the largest K of "before-last-K-messages" whose result fits the budget
  for (let k = model.length; k >= 0; k--) {
    const toolCalls = k === 0 ? "all" : `before-last-${k}-messages`;
    last = render(pruneMessages({ messages: model, toolCalls }));
    if (await count(last) <= budget) return last;
  }
  return last;
}

// ------------------------------------------------------------------ @llamaindex/core

async function llamaindexMemory(conversation, budget) {
  const { ChatMemoryBuffer } = await import("@llamaindex/core/memory");
  const chat = conversation.map((m) => {
    if (m.role === "tool") {
      return { role: "user", content: textOf(m.content),
        options: { toolResult: { id: m.tool_call_id, result: textOf(m.content), isError: false } } };
    }
    if (m.role === "assistant" && m.tool_calls?.length) {
      return { role: "assistant", content: textOf(m.content), options: { toolCall: m.tool_calls.map(
        (tc) => ({ id: tc.id, name: tc.function?.name ?? "", input: tc.function?.arguments ?? "" })) } };
    }
    return { role: m.role, content: textOf(m.content) };
  });
  const back = new Map(chat.map((c, i) => [c, conversation[i]]));
  // a stand-in LLM: the buffer reads llm.metadata.contextWindow even when tokenLimit is given
  const llm = { metadata: { contextWindow: 1 << 30 } };
  const memory = new ChatMemoryBuffer({ tokenLimit: budget, chatHistory: chat, llm });
  const out = await memory.getMessages();
  return out.map((c) => back.get(c) ?? { role: c.role, content: textOf(c.content) });
}

// ------------------------------------------------------------------ @openai/agents-core

// Responses input items (snake_case, as the API takes them) -> the SDK's AgentInputItem
// (camelCase call ids), as its own converters store them in a session.
const toAgentItem = (it) => it.type === "function_call"
  ? { type: "function_call", callId: it.call_id, name: it.name, arguments: it.arguments,
      ...(it.id ? { id: it.id } : {}), ...(it.status ? { status: it.status } : {}) }
  : it.type === "function_call_output"
    ? { type: "function_call_result", callId: it.call_id, name: "", status: "completed",
        output: typeof it.output === "string" ? { type: "text", text: it.output } : it.output }
    : it;

async function agentsSession(conversation, budget) {
  const { MemorySession } = await import("@openai/agents-core");
  const session = new MemorySession({ initialItems: conversation.map(toAgentItem) });
  let last = conversation;
  // the user who picks the largest K of getItems(K) whose result fits the budget; the K items
  // the session returns are the input's last K (mapped back to the original items by position)
  for (let k = conversation.length; k >= 1; k--) {
    const items = await session.getItems(k);
    last = conversation.slice(conversation.length - items.length);
    if (await count(last) <= budget) return last;
  }
  return last;
}

const PEERS = {
  "langchainjs-last": (c, b) => langchain(c, b, { strategy: "last" }),
  "langchainjs-last-system": (c, b) => langchain(c, b, { strategy: "last", includeSystem: true, startOn: "human" }),
  "langchainjs-first": (c, b) => langchain(c, b, { strategy: "first" }),
  "ai-prune-tool-calls": aiPrune,
  "llamaindexjs-chat-memory": llamaindexMemory,
  "openai-agentsjs-session": agentsSession,
};

if (!(PEER in PEERS)) {
  process.stderr.write(`unknown peer ${JSON.stringify(PEER)}; one of: ${Object.keys(PEERS).join(", ")}\n`);
  process.exit(2);
}
for (;;) {
  const line = await nextLine();
  if (line === null) break;
  const c = JSON.parse(line);
  if (c.type !== "case") continue;
  send({ type: "request", request: await PEERS[PEER](c.conversation, c.budget) });
}
