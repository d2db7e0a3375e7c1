"""Recording: the transport wrapper and the proxy, against the simulator as the upstream."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from pathlib import Path
from typing import Any, cast

import anyio
import httpx
import pytest

from sse_toolcalls import UsageError
from sse_toolcalls.tooling.cli import main
from sse_toolcalls.tooling.corpus import check_corpus
from sse_toolcalls.tooling.corpus.record import Recorder, RecordingProxy, RecordingTransport
from sse_toolcalls.tooling.simulator import Script, ScriptedCall, Simulator, Turn

KEY = "sk-test-0123456789abcdefSECRET"
GOOGLE_KEY = "AIzaSyTESTKEY-9876543210"
ORG = "org-PRIVATE-4242"
PATHS = {
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/sim-model-1:streamGenerateContent?alt=sse",
}
TWO_CALLS = Turn(
    calls=(
        ScriptedCall(name="lookup", args={"key": "height"}, call_id="c1"),
        ScriptedCall(name="lookup", args={"key": f"weight {ORG}"}, call_id="c2"),
    ),
    fragment_size=64,  # the secret stays whole in the body (a split one: see below)
)


def secret_headers(dialect: str) -> dict[str, str]:
    return {
        "openai_chat": {"authorization": f"Bearer {KEY}"},
        "openai_responses": {"authorization": f"Bearer {KEY}"},
        "anthropic": {"x-api-key": KEY},
        "gemini": {"x-goog-api-key": GOOGLE_KEY},
    }[dialect]


def every_file_text(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def assert_no_secret(folder: Path) -> None:
    data = every_file_text(folder)
    for secret in (KEY, GOOGLE_KEY, ORG):
        assert secret.encode() not in data, secret


@pytest.mark.parametrize("dialect", list(PATHS))
def test_a_stream_recorded_through_the_transport_replays_to_the_same_calls(
    dialect: str, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    recorder = Recorder(corpus, patterns=[r"org-[A-Z]+-\d+"])
    transport = RecordingTransport(httpx.HTTPTransport(), recorder)
    query_key = "&key=" + GOOGLE_KEY if dialect == "gemini" else ""
    with (
        Simulator([TWO_CALLS]) as sim,
        httpx.Client(transport=cast(httpx.BaseTransport, transport)) as http,
        http.stream(
            "POST",
            sim.base_url + PATHS[dialect] + query_key,
            json={"stream": True},
            headers=secret_headers(dialect),
        ) as r,
    ):
        seen = b"".join(r.iter_raw())
    (entry,) = recorder.entries
    raw = (corpus / entry["file"]).read_bytes()
    assert entry["dialect"] == dialect and entry["status"] == 200
    assert entry["headers"]["content-type"].startswith("text/event-stream")
    assert sum(entry["chunks"]) == len(raw) and len(entry["chunks"]) > 1
    # Byte-exact but for the user's pattern, which the stream carried in an argument.
    assert raw == seen.replace(ORG.encode(), b"[REDACTED]")
    assert entry["expected"]["outcome"] == "complete"
    assert [(c["call_id"], c["args"]["key"]) for c in entry["expected"]["calls"]] == [
        ("c1", "height"),
        ("c2", "weight [REDACTED]"),
    ]
    if dialect == "gemini":
        assert "key=%5BREDACTED%5D" in entry["path"] or "key=[REDACTED]" in entry["path"]
    assert_no_secret(corpus)
    assert [r.problem for r in check_corpus(corpus)] == [None]


def test_the_async_transport_and_an_early_close_are_recorded(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path)

    async def run() -> None:
        transport = RecordingTransport(httpx.AsyncHTTPTransport(), recorder)
        async with httpx.AsyncClient(transport=cast(httpx.AsyncBaseTransport, transport)) as http:
            url = sim.base_url + PATHS["anthropic"]
            async with http.stream("POST", url, json={"stream": True}) as response:
                async for _ in response.aiter_raw():
                    break  # the consumer stops reading after one chunk

    with Simulator([TWO_CALLS]) as sim:
        anyio.run(run)
    (entry,) = recorder.entries
    assert entry["transport_error"] == "closed before its end"
    assert entry["expected"]["outcome"] == "truncated"


def test_a_secret_split_across_reads_is_redacted_and_the_boundaries_move() -> None:
    from sse_toolcalls.tooling.corpus.record import Redactor

    redactor = Redactor([r"s3cr3t-\d+"])
    body = b"data: s3cr3t-12345\n\n"
    out, reads = redactor.body(body, [10, 5, len(body) - 15])
    assert out == b"data: [REDACTED]\n\n"
    assert sum(reads) == len(out) and reads[0] == len(b"data: [REDACTED]")


def test_a_bad_pattern_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="bad redaction pattern"):
        Recorder(tmp_path, patterns=["("])


def test_the_proxy_records_what_it_passes_on(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    with (
        Simulator(Script(turns=(TWO_CALLS, TWO_CALLS), check_results=False)) as sim,
        RecordingProxy(sim.base_url, Recorder(corpus, patterns=[r"org-[A-Z]+-\d+"])) as proxy,
        httpx.Client() as http,
    ):
        for dialect in ("openai_chat", "gemini"):
            url = proxy.base_url + PATHS[dialect]
            with http.stream(
                "POST", url, json={"stream": True}, headers=secret_headers(dialect)
            ) as r:
                assert r.status_code == 200
                body = b"".join(r.iter_raw())
                assert b"lookup" in body
        # The upstream still gets the key: redaction is for the files only.
        assert sim.requests[0].headers.get("authorization") == f"Bearer {KEY}"
    entries = json.loads((corpus / "MANIFEST.json").read_text())
    assert [e["dialect"] for e in entries] == ["openai_chat", "gemini"]
    assert_no_secret(corpus)
    assert [r.problem for r in check_corpus(corpus)] == [None, None]


@pytest.mark.skipif(importlib.util.find_spec("openai") is None, reason="the bench extra")
def test_the_openai_sdk_through_the_proxy(tmp_path: Path) -> None:
    import openai

    with (
        Simulator([TWO_CALLS]) as sim,
        RecordingProxy(sim.base_url, Recorder(tmp_path, patterns=[r"org-[A-Z]+-\d+"])) as proxy,
    ):
        client = openai.OpenAI(base_url=proxy.base_url + "/v1", api_key=KEY)
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        for _ in stream:
            pass
    (entry,) = Recorder(tmp_path).entries
    assert [c["call_id"] for c in entry["expected"]["calls"]] == ["c1", "c2"]
    assert_no_secret(tmp_path)


def test_sse_toolcalls_record_serves_until_stopped(tmp_path: Path) -> None:
    from sse_toolcalls.tooling.corpus.record import serve_proxy

    stop = threading.Event()
    status: list[int] = []
    with Simulator([TWO_CALLS]) as sim:
        thread = threading.Thread(
            target=lambda: status.append(
                serve_proxy(sim.base_url, str(tmp_path), port=0, stop=stop)
            )
        )
        thread.start()
        time.sleep(0.5)
        stop.set()
        thread.join(10)
    assert status == [0]
    assert main(["record", "--upstream", "ftp://x", "--out", str(tmp_path)]) == 2


def test_headers_are_kept_only_where_they_matter(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path)
    entry: dict[str, Any] = recorder.save(
        redactor=recorder.redactor(),
        url="http://h/v1/messages",
        status=200,
        headers=[("content-type", "text/event-stream"), ("set-cookie", "s=1"), ("x-other", "y")],
        reads=[b"event: ping\ndata: {}\n\n"],
    )
    assert entry["headers"] == {"content-type": "text/event-stream"}


def test_a_secret_split_across_deltas_is_not_written(tmp_path: Path) -> None:
    # The user's pattern matches the reassembled arguments though no delta holds it whole:
    # the body would give it back to any reader (`replay` prints it), so it is withheld.
    recorder = Recorder(tmp_path, patterns=[r"org-[A-Z]+-\d+"])
    split = Turn(calls=TWO_CALLS.calls, fragment_size=3)
    transport = RecordingTransport(httpx.HTTPTransport(), recorder)
    with (
        Simulator([split]) as sim,
        httpx.Client(transport=cast(httpx.BaseTransport, transport)) as http,
        http.stream("POST", sim.base_url + PATHS["anthropic"], json={"stream": True}) as r,
    ):
        assert b"lookup" in r.read()  # the application's stream is untouched
    assert recorder.entries == []
    (withheld,) = recorder.withheld
    assert withheld["path"] == PATHS["anthropic"] and "reassembled" in withheld["reason"]
    assert_no_secret(tmp_path)


def test_a_key_the_upstream_echoes_is_redacted_from_the_body_and_the_error(
    tmp_path: Path,
) -> None:
    body = (
        'event: error\ndata: {"type":"error","error":{"type":"authentication_error",'
        f'"message":"invalid x-api-key {KEY}"}}}}\n\n'
    ).encode()

    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            401, headers={"content-type": "text/event-stream"}, stream=httpx.ByteStream(body)
        )

    recorder = Recorder(tmp_path)
    transport = RecordingTransport(httpx.MockTransport(upstream), recorder)
    with httpx.Client(transport=cast(httpx.BaseTransport, transport)) as http:
        http.post("http://h/v1/messages", headers={"x-api-key": KEY}).read()
    (entry,) = recorder.entries
    assert entry["status"] == 401 and entry["expected"]["outcome"] == "provider_error"
    assert "[REDACTED]" in entry["error"]["message"]
    assert_no_secret(tmp_path)


def test_httpx2_transports_are_recorded_too(tmp_path: Path) -> None:
    # By capability: the wrapper never names httpx, so httpx2's transport and stream
    # classes work as they are (httpx2 is in the test extra, so CI runs this).
    httpx2 = pytest.importorskip("httpx2")
    recorder = Recorder(tmp_path)
    transport = RecordingTransport(httpx2.HTTPTransport(), recorder)
    with (
        Simulator([TWO_CALLS]) as sim,
        httpx2.Client(transport=transport) as http,
        http.stream("POST", sim.base_url + PATHS["anthropic"], json={"stream": True}) as r,
    ):
        seen = b"".join(r.iter_raw())
    (entry,) = recorder.entries
    assert (tmp_path / entry["file"]).read_bytes() == seen
    assert [c["call_id"] for c in entry["expected"]["calls"]] == ["c1", "c2"]


def test_the_proxy_withholds_a_split_secret_and_says_so_on_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sse_toolcalls.tooling.corpus.record import serve_proxy

    split = Turn(calls=TWO_CALLS.calls, fragment_size=3)
    stop = threading.Event()
    status: list[int] = []
    with Simulator([split]) as sim:
        thread = threading.Thread(
            target=lambda: status.append(
                serve_proxy(
                    sim.base_url, str(tmp_path), port=0, patterns=[r"org-[A-Z]+-\d+"], stop=stop
                )
            )
        )
        thread.start()
        try:
            said = ""
            for _ in range(200):  # a hang guard: the proxy says where it listens at once
                said += capsys.readouterr().out
                if " on http://" in said:
                    break
                time.sleep(0.05)
            base = said.split(" on ", 1)[1].split()[0]
            with httpx.Client() as http:
                response = http.post(base + PATHS["anthropic"], json={"stream": True})
            assert ORG.encode() not in response.content  # pieces only; the app reads on
        finally:
            stop.set()
            thread.join(10)
    assert status == [0]
    err = capsys.readouterr().err
    assert "not written: /v1/messages" in err and ORG not in err
    assert_no_secret(tmp_path)


def test_the_recorder_reads_each_dialect_from_its_clients_url() -> None:
    # The endpoint markers are the dialects' (DialectSpec.endpoint); each client's own URL
    # must be read back as its dialect.
    from urllib.parse import urlsplit

    from sse_toolcalls.runtime.clients import CLIENTS
    from sse_toolcalls.tooling.corpus import record

    for dialect, client_class in CLIENTS.items():
        # Bedrock's endpoint is per region.
        region: dict[str, Any] = {"region": "us-east-1"} if dialect.startswith("bedrock") else {}
        client = client_class(model="m", api_key="k", **region)
        assert record._dialect_of(urlsplit(client.url()).path) == dialect
