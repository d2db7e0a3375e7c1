// Reads our UI message stream as useChat does: the SSE bytes on stdin through the ai
// package's own parser (parseJsonEventStream with uiMessageChunkSchema, as
// DefaultChatTransport.processResponseStream does), then readUIMessageStream. Prints
// {message, chunks, errors, headers} (headers: the SDK's own response headers);
// argv[2], when given, is the JSON of the message a resumed stream continues.
// tests/runtime/ui/test_vercel*.py.
import {
  parseJsonEventStream,
  readUIMessageStream,
  UI_MESSAGE_STREAM_HEADERS,
  uiMessageChunkSchema,
} from "ai";

const input = [];
for await (const piece of process.stdin) input.push(piece);
const bytes = Buffer.concat(input);
const start = process.argv[2] ? JSON.parse(process.argv[2]) : undefined;

const chunks = [];
const errors = [];
const raw = new ReadableStream({
  start(controller) {
    // Pieces of 1 to 13 bytes, as a network may cut them (inside a line, a UTF-8
    // sequence, a CRLF): the reader must assemble the same message however split.
    let at = 0;
    for (let size = 1; at < bytes.length; size = (size % 13) + 1) {
      controller.enqueue(new Uint8Array(bytes.subarray(at, at + size)));
      at += size;
    }
    controller.close();
  },
});
const parsed = parseJsonEventStream({ stream: raw, schema: uiMessageChunkSchema }).pipeThrough(
  new TransformStream({
    transform(chunk, controller) {
      if (!chunk.success) throw chunk.error;
      chunks.push(chunk.value);
      controller.enqueue(chunk.value);
    },
  }),
);
let message;
try {
  for await (const m of readUIMessageStream({
    stream: parsed,
    message: start,
    onError: (e) => errors.push(String(e && e.message ? e.message : e)),
  })) {
    message = m;
  }
} catch (e) {
  // An error chunk reaches onError; a chunk the schema refuses is thrown, and kept here.
  errors.push(`thrown: ${e && e.message ? e.message : e}`);
}
console.log(
  JSON.stringify({
    message,
    chunks,
    errors,
    headers: UI_MESSAGE_STREAM_HEADERS,
  }),
);
