#!/usr/bin/env node
// Run a JavaScript context manager on vista-lab's exported conformance corpus, without
// Python (`vista-lab conformance --export DIR` writes DIR/corpus.json and its JSON
// Schema). No npm dependencies.
//
//   node run_corpus.mjs DIR/corpus.json [--manager ./my_trim.mjs] [--orphan]
//
// The manager module's default export is `trim(case, count)`: `case` holds `protocol`,
// `budget`, `pinned` and `conversation`; `count(request)` prices a request made of whole
// input messages with the corpus's prices (exactly the suite's count); it returns
// {type: "request", request} or {type: "refuse", reason} (or a promise of one). Default:
// ./tail.mjs, the tail trimmer.
//
// This runner judges the checks below (a subset of the corpus's `checks`: the others,
// such as recoverability or the provider-specific shape rules, need the Python suite) and
// compares each verdict with the reference managers' verdicts recorded in the corpus.
// Exit status 0 when every case passes, 1 when one breaks a check.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

export const JUDGED = ["budget.over", "budget.empty", "budget.refused", "pinned.dropped",
  "protocol.orphan-result", "protocol.dangling-call", "fidelity.altered",
  "fidelity.reordered", "crash.raised", "determinism.differs"];

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith("--") && args[args.indexOf(a) - 1] !== "--manager");
if (!file) {
  console.error("usage: node run_corpus.mjs DIR/corpus.json [--manager ./my_trim.mjs]");
  process.exit(2);
}
const mi = args.indexOf("--manager");
const managerPath = mi >= 0 ? resolve(args[mi + 1]) : new URL("./tail.mjs", import.meta.url);
const trim = (await import(mi >= 0 ? pathToFileURL(managerPath).href : managerPath.href)).default;
const corpus = JSON.parse(readFileSync(file, "utf8"));
if (corpus.kind !== "vista-lab/conformance-corpus") {
  console.error(`${file}: not a vista-lab conformance corpus (kind ${corpus.kind})`);
  process.exit(2);
}

const key = (x) => JSON.stringify(x);
const messagesOf = (c, request) => (c.protocol === "anthropic" ? request.messages : request);

function counter(c) {
  const input = c.protocol === "anthropic" ? c.conversation.messages : c.conversation;
  const price = new Map(input.map((m, i) => [key(m), c.prices ? c.prices.messages[i] : 0]));
  return (request) => {
    if (!c.prices) throw new Error("the corpus has no prices for this protocol");
    let n = c.prices.constant;
    if (c.protocol === "anthropic" && request.system != null) n += c.prices.system;
    for (const m of messagesOf(c, request)) {
      if (!price.has(key(m))) throw new Error("cannot count a message that is not a whole input message");
      n += price.get(key(m));
    }
    return n;
  };
}

function toolIds(m, protocol) {
  // [calls, results] of one message
  if (protocol === "anthropic") {
    const blocks = Array.isArray(m.content) ? m.content : [];
    return [blocks.filter((b) => b.type === "tool_use").map((b) => b.id),
            blocks.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id)];
  }
  return [(m.tool_calls || []).map((t) => t.id), m.role === "tool" ? [m.tool_call_id] : []];
}

function judge(c, out, count) {
  const broken = new Map();
  const add = (id, why) => { if (!broken.has(id)) broken.set(id, why); };
  if (out.type === "refuse") {
    if (c.must === "request") add("budget.refused", `refused at ${c.budget}, at or above the pinned floor ${c.pinned_floor}`);
    return broken;
  }
  const req = out.request;
  const msgs = messagesOf(c, req) || [];
  const input = c.protocol === "anthropic" ? c.conversation.messages : c.conversation;
  if (!msgs.length) { add("budget.empty", "the request is empty"); return broken; }
  try {
    const used = count(req);
    if (used > c.budget) add("budget.over", `the request costs ${used} tokens, over the budget of ${c.budget}`);
  } catch (e) { add("fidelity.altered", e.message); }
  if (c.pinned === "system") {
    const kept = c.protocol === "anthropic"
      ? (c.conversation.system == null || key(req.system) === key(c.conversation.system))
      : input.filter((m) => m.role === "system").every((m) => msgs.some((o) => key(o) === key(m)));
    if (!kept) add("pinned.dropped", "the system prompt is not kept");
  }
  // each request message at the first equal input message after the previous one's
  // (a conversation may hold equal messages: "continue" twice), else at its first anywhere
  let last = -1;
  const where = msgs.map((m) => {
    const k = key(m);
    const after = input.findIndex((x, i) => i > last && key(x) === k);
    const at = after >= 0 ? after : input.findIndex((x) => key(x) === k);
    if (at >= 0) last = at;
    return at;
  });
  if (where.some((i) => i < 0)) add("fidelity.altered", "a message of the request is not an input message");
  else if (where.some((i, j) => j > 0 && i <= where[j - 1])) add("fidelity.reordered", "the request reorders the input");
  // tool calls and their results, within the request (ids may repeat across turns)
  const called = new Set();
  const answers = (list, id) => list.some((m) => toolIds(m, c.protocol)[1].includes(id));
  msgs.forEach((m, j) => {
    const [calls, results] = toolIds(m, c.protocol);
    for (const r of results) if (!called.has(r)) add("protocol.orphan-result", `the result ${r} has no call before it`);
    for (const id of calls) {
      called.add(id);
      const inInput = where[j] >= 0 && answers(input.slice(where[j] + 1), id);
      if (inInput && !answers(msgs.slice(j + 1), id)) add("protocol.dangling-call", `the call ${id} is kept without its result`);
    }
  });
  return broken;
}

let failed = 0;
let differs = 0;
for (const c of corpus.cases) {
  const count = counter(c);
  const view = { protocol: c.protocol, budget: c.budget, pinned: c.pinned, conversation: structuredClone(c.conversation) };
  let broken;
  try {
    const out = await trim(view, count);
    const again = await trim({ ...view, conversation: structuredClone(c.conversation) }, count);
    broken = judge(c, out, count);
    if (key(out) !== key(again)) broken.set("determinism.differs", "two runs returned different outputs");
  } catch (e) {
    broken = new Map([["crash.raised", `the manager threw ${e && e.message}`]]);
  }
  const ref = c.reference.tail_trimmer;
  const refBroken = ref ? ref.broken.filter((id) => JUDGED.includes(id)) : [];
  const mine = [...broken.keys()].sort();
  if (ref && key(mine) !== key([...refBroken].sort())) differs += 1;
  if (broken.size) {
    failed += 1;
    for (const [id, why] of broken) console.log(`${c.id} FAIL [${id}] ${why} (budget ${c.budget})`);
  }
}
console.log(`${corpus.cases.length} cases (${corpus.protocol}), ${failed} failed; checks judged here: ` +
  `${JUDGED.length} of ${Object.keys(corpus.checks).length}; verdicts that differ from the ` +
  `reference tail_trimmer's: ${differs}`);
process.exit(failed ? 1 : 0);
