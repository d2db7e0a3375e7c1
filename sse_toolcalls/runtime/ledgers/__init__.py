"""The idempotency ledgers: the protocol and what they share (``base``), and one module
per backend (``memory``, ``sqlite``, ``postgres``). Import them from
``sse_toolcalls.runtime``; a new backend is one module here (see docs/extending.md)."""
