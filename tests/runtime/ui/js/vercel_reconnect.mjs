// useChat's own resume path: DefaultChatTransport.reconnectToStream GETs
// `${api}/${chatId}/stream` from our server (204 -> null). argv: api, chatId, and
// optionally the Last-Event-ID to send. stdin: the bytes the first, dropped response
// gave before the drop (may be empty); they are parsed by the SDK's own parser and put
// in front of the resumed chunks, one stream for readUIMessageStream (a client that
// keeps what it saw and asks for the rest). Prints {status, message, chunks, errors}.
// tests/runtime/ui/test_resume_clients.py.
import {
  DefaultChatTransport,
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
} from "ai";

const [api, chatId, lastEventId] = process.argv.slice(2);
const input = [];
for await (const piece of process.stdin) input.push(piece);
const before = Buffer.concat(input);

const transport = new DefaultChatTransport({ api });
const resumed = await transport.reconnectToStream({
  chatId,
  headers: lastEventId ? { "Last-Event-ID": lastEventId } : undefined,
});
if (resumed === null) {
  console.log(JSON.stringify({ status: 204 }));
  process.exit(0);
}

const errors = [];
const chunks = [];
const firstPart = parseJsonEventStream({
  stream: new ReadableStream({
    start(controller) {
      if (before.length) controller.enqueue(new Uint8Array(before));
      controller.close();
    },
  }),
  schema: uiMessageChunkSchema,
});
const joined = new ReadableStream({
  async start(controller) {
    for await (const parsed of firstPart) {
      if (!parsed.success) throw parsed.error;
      controller.enqueue(parsed.value);
    }
    for await (const chunk of resumed) controller.enqueue(chunk);
    controller.close();
  },
}).pipeThrough(
  new TransformStream({
    transform(chunk, controller) {
      chunks.push(chunk);
      controller.enqueue(chunk);
    },
  }),
);
let message;
try {
  for await (const m of readUIMessageStream({
    stream: joined,
    onError: (e) => errors.push(String(e && e.message ? e.message : e)),
  })) {
    message = m;
  }
} catch (e) {
  errors.push(`thrown: ${e && e.message ? e.message : e}`);
}
console.log(JSON.stringify({ status: 200, message, chunks, errors }));
