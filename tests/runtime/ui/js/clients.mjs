// What the tests' clients are: each package's installed version and the readers the
// tests use, as JSON on stdout (tests/runtime/ui/test_js_clients.py).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as ai from "ai";
import * as agui from "@ag-ui/client";

const require = createRequire(import.meta.url);
const version = (name) =>
  JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")).version;

console.log(
  JSON.stringify({
    ai: version("ai"),
    "@ag-ui/client": version("@ag-ui/client"),
    readUIMessageStream: typeof ai.readUIMessageStream,
    HttpAgent: typeof agui.HttpAgent,
  }),
);
