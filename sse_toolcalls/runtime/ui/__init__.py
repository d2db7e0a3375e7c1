"""From the agent to the screen: a run's events as the streams chat UIs read (issue 32).

One module per protocol, each turning :meth:`~sse_toolcalls.runtime.Agent.run_stream`'s
events into that protocol's events and its request body into a run: ``agui`` (AG-UI,
``@ag-ui/client``) and ``vercel`` (the Vercel AI SDK's UI message stream, ``useChat``).
Both write Server-Sent Events through :mod:`.sse_out`. :mod:`.resumable` serves either so
that a run outlives its connection, kept in a :mod:`.runlog` (memory, SQLite, PostgreSQL)
and resumed with ``Last-Event-ID``.
"""
