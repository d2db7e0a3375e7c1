// Our AG-UI stream read by @ag-ui/client's own HttpAgent (tests/runtime/ui/test_agui*.py).
// stdin: {"stream": <our SSE bytes as text>, "messages": [...], "threadId", "runId",
// "resume": [...]?}. A loopback server answers the agent's POST with the stream; stdout:
// what the client assembled (messages, events, interrupts, errors) and what it posted.
import { createServer } from "node:http";
import { HttpAgent } from "@ag-ui/client";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const given = JSON.parse(Buffer.concat(chunks).toString("utf8"));

let posted = null;
const server = createServer((req, res) => {
  const body = [];
  req.on("data", (c) => body.push(c));
  req.on("end", () => {
    posted = JSON.parse(Buffer.concat(body).toString("utf8"));
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(given.stream);
  });
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const url = `http://127.0.0.1:${server.address().port}/`;

const agent = new HttpAgent({ url, threadId: given.threadId, initialMessages: given.messages });
const events = [];
let outcome = null;
let error = null;
try {
  await agent.runAgent(
    { runId: given.runId, ...(given.resume ? { resume: given.resume } : {}) },
    {
      onEvent: ({ event }) => {
        events.push(event.type);
      },
      onRunFinishedEvent: (p) => {
        outcome = { outcome: p.outcome, interrupts: p.interrupts ?? [], usage: p.event.usage ?? null };
      },
      onRunErrorEvent: ({ event }) => {
        error = { message: event.message, code: event.code ?? null };
      },
    },
  );
} catch (exc) {
  error = error ?? { message: String(exc?.message ?? exc), code: "client" };
}
server.close();
console.log(
  JSON.stringify({
    messages: agent.messages,
    events,
    outcome,
    error,
    pendingInterrupts: agent.pendingInterrupts,
    posted,
  }),
);
