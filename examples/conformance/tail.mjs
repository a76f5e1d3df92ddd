// The tail trimmer of vista-lab's conformance examples, in JavaScript (no npm
// dependencies): keep the system prompt (pinned) and the longest tail of whole exchanges
// that fits the budget. A tail starts only at a user turn, so a tool result never loses
// the call it answers; below the pinned floor (the system prompt and the last user turn)
// it refuses. `count(request)` may return a number or a promise of one.
//
// `orphan: true` is a broken variant for the tests: tails may also start at a tool
// result, orphaning it (protocol.orphan-result).

const isToolResultTurn = (m) =>
  Array.isArray(m.content) && m.content.some((b) => b && b.type === "tool_result");

export async function tailTrim(c, count, { orphan = false } = {}) {
  const anthropic = c.protocol === "anthropic";
  const turns = anthropic ? c.conversation.messages || [] : c.conversation;
  const system = anthropic ? [] : turns.filter((m) => m.role === "system");
  const rest = anthropic ? turns : turns.filter((m) => m.role !== "system");
  const build = (tail) =>
    anthropic ? { system: c.conversation.system, messages: tail } : [...system, ...tail];
  const starts = [];
  rest.forEach((m, i) => {
    if ((m.role === "user" && !isToolResultTurn(m)) || (orphan && m.role === "tool")) {
      starts.push(i);
    }
  });
  if (!starts.length) starts.push(0);
  for (const i of starts) {
    const request = build(rest.slice(i));
    if ((await count(request)) <= c.budget) return { type: "request", request };
  }
  return { type: "refuse", reason: `budget ${c.budget} is below the pinned floor` };
}

export default function trim(c, count) {
  return tailTrim(c, count, { orphan: process.argv.includes("--orphan") });
}
