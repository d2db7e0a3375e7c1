// @ag-ui/client's HttpAgent against our server (tests/runtime/ui/test_agui_client.py):
// it posts its own RunAgentInput; when the run ends on interrupts, it answers each with
// {"approved": <given>} through buildResumeArray and runs again. stdin: {"url",
// "threadId", "text", "approve"}; stdout: the runs' outcomes and the final messages.
import { HttpAgent, buildResumeArray } from "@ag-ui/client";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const given = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const agent = new HttpAgent({
  url: given.url,
  threadId: given.threadId,
  initialMessages: [{ id: "u1", role: "user", content: given.text }],
});
const runs = [];
const subscriber = {
  onRunFinishedEvent: (p) => {
    runs.push({ outcome: p.outcome, interrupts: p.interrupts ?? [] });
  },
  onRunErrorEvent: ({ event }) => {
    runs.push({ error: event.message, code: event.code ?? null });
  },
};
await agent.runAgent({}, subscriber);
const last = runs[runs.length - 1];
if (last?.outcome === "interrupt") {
  const answers = Object.fromEntries(
    last.interrupts.map((i) => [i.id, { status: "resolved", payload: { approved: given.approve } }]),
  );
  await agent.runAgent({ resume: buildResumeArray(last.interrupts, answers) }, subscriber);
}
console.log(JSON.stringify({ runs, messages: agent.messages }));
