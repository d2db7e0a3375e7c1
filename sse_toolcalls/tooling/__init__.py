"""The tooling: the loopback simulator (:mod:`~sse_toolcalls.tooling.simulator`), the
corpus tools that record, check and fuzz streams (:mod:`~sse_toolcalls.tooling.corpus`),
BFCL (:mod:`~sse_toolcalls.tooling.bfcl`), the catalogue, the demos and the CLI
(:mod:`~sse_toolcalls.tooling.cli`, ``sse-toolcalls``).

It builds on the wire core and the runtime; nothing below imports it. Each part has its
own face; this package re-exports nothing, so importing one part loads no other.
"""
