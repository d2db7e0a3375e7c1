"""The conversation stores: the protocol and the JSON codec they share (``base``), and
one module per backend (``memory``, ``sqlite``, ``postgres``). Import them from
``sse_toolcalls.runtime``."""
