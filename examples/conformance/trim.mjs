#!/usr/bin/env node
// A context manager written in JavaScript, run by vista-lab's conformance suite as a
// process: `vista-lab conformance --command "node trim.mjs"`, speaking the JSON-lines
// protocol of docs/guide/conformance.md ("Managers in any language"). No npm dependencies.
// One line in per case ({"type": "case", ...}); token counts are asked of the suite
// ({"type": "count"} -> {"type": "tokens"}), so the manager counts as the suite does; one
// line out: {"type": "request"} or {"type": "refuse"}. The trimming itself is tail.mjs.
//
//   node trim.mjs            the correct manager
//   node trim.mjs --orphan   a broken variant (the suite reports protocol.orphan-result)
import { createInterface } from "node:readline";
import { tailTrim } from "./tail.mjs";

const orphan = process.argv.includes("--orphan");
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const queue = [];
const waiting = [];
lines.on("line", (line) => (waiting.length ? waiting.shift()(line) : queue.push(line)));
lines.on("close", () => { while (waiting.length) waiting.shift()(null); });
const nextLine = () => new Promise((resolve) =>
  queue.length ? resolve(queue.shift()) : waiting.push(resolve));
const send = (doc) => process.stdout.write(JSON.stringify(doc) + "\n");

async function count(request) {
  send({ type: "count", request });
  const line = await nextLine();
  if (line === null) throw new Error("the suite closed the pipe");
  const answer = JSON.parse(line);
  if (answer.type !== "tokens") throw new Error(`the suite could not count: ${answer.message}`);
  return answer.tokens;
}

for (;;) {
  const line = await nextLine();
  if (line === null) break;
  const c = JSON.parse(line);
  if (c.type === "case") send(await tailTrim(c, count, { orphan }));
}
