// Reads many UI message streams in one node process (a JSON array of SSE texts on
// stdin) with the ai package's own parser and readUIMessageStream; prints, per stream,
// {message, errors}. tests/runtime/ui/test_vercel_client.py's seeded orders of events.
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from "ai";

const input = [];
for await (const piece of process.stdin) input.push(piece);
const streams = JSON.parse(Buffer.concat(input).toString("utf8"));

async function read(text) {
  const bytes = new TextEncoder().encode(text);
  const errors = [];
  const raw = new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
  const parsed = parseJsonEventStream({ stream: raw, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        if (!chunk.success) throw chunk.error;
        controller.enqueue(chunk.value);
      },
    }),
  );
  let message;
  try {
    for await (const m of readUIMessageStream({
      stream: parsed,
      onError: (e) => errors.push(String(e && e.message ? e.message : e)),
    })) {
      message = m;
    }
  } catch (e) {
    errors.push(`thrown: ${e && e.message ? e.message : e}`);
  }
  return { message, errors };
}

const out = [];
for (const text of streams) out.push(await read(text));
console.log(JSON.stringify(out));
