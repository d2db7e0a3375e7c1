"""A replayed write keeps its media (issue 12): a write whose tool returned images or
documents replays with them, from every ledger backend (memory, SQLite, PostgreSQL);
media past ``MAX_RECORDED_MEDIA_BYTES`` replay as the documented line of text."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sse_toolcalls import Document, Image, ToolCall
from sse_toolcalls.runtime import recorded
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.ledgers.base import IdempotencyLedger
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.ledgers.sqlite import SQLiteLedger
from sse_toolcalls.runtime.recorded import (
    MAX_RECORDED_MEDIA_BYTES,
    recorded_content,
    replayed_parts,
)
from sse_toolcalls.runtime.tools import ToolRegistry

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
MEDIA = (
    Image(data=PNG, media_type="image/png", name="chart"),
    Document(data=PDF, name="report.pdf"),
    Image(url="gs://bucket/map.png", media_type="image/png"),
)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def ledger(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[IdempotencyLedger]:
    if request.param == "memory":
        yield InMemoryLedger()
    elif request.param == "sqlite":
        yield SQLiteLedger(tmp_path / "ledger.db")
    else:
        from sse_toolcalls.runtime.ledgers.postgres import PostgresLedger

        dsn: str = request.getfixturevalue("postgres_dsn")
        async with PostgresLedger(dsn) as pg:
            yield pg


def _registry(runs: list[str], media: tuple[Any, ...]) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register(effect="write")
    def draw(city: str) -> list[Any]:
        """Draw and file a city's chart.

        Args:
            city: the city.
        """
        runs.append(city)
        return [f"Chart for {city}", *media]

    return registry


def _call(call_id: str) -> ToolCall:
    return ToolCall(
        name="draw", args={"city": "Rome"}, provider="anthropic", call_id=call_id, index=0
    )


@pytest.mark.anyio
async def test_a_replayed_write_keeps_its_media(ledger: IdempotencyLedger) -> None:
    runs: list[str] = []
    dispatcher = Dispatcher(_registry(runs, MEDIA), ledger=ledger)
    first = await dispatcher.dispatch([_call("toolu_1")], request_id="r-1")
    again = await dispatcher.dispatch([_call("toolu_2")], request_id="r-1")
    assert runs == ["Rome"]
    assert (first[0].outcome, again[0].outcome) == ("ok", "replayed")
    assert again[0].result.media == first[0].result.media == MEDIA
    replay = again[0].result.content
    assert isinstance(replay, dict)
    assert replay["replayed"] is True and replay["result"] == "Chart for Rome"
    assert "media_not_kept" not in replay


@pytest.mark.anyio
async def test_media_over_the_bound_replay_as_text(
    ledger: IdempotencyLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recorded, "MAX_RECORDED_MEDIA_BYTES", len(PNG) + 10)
    runs: list[str] = []
    dispatcher = Dispatcher(_registry(runs, MEDIA), ledger=ledger)
    await dispatcher.dispatch([_call("toolu_1")], request_id="r-1")
    again = await dispatcher.dispatch([_call("toolu_2")], request_id="r-1")
    # The image fits, the PDF would pass the bound, the URL costs nothing.
    assert again[0].result.media == (MEDIA[0], MEDIA[2])
    replay = again[0].result.content
    assert isinstance(replay, dict)
    [note] = replay["media_not_kept"]
    assert "'report.pdf'" in note and "application/pdf" in note and f"{len(PDF)} bytes" in note
    assert f"MAX_RECORDED_MEDIA_BYTES={len(PNG) + 10}" in note


@pytest.mark.anyio
async def test_a_write_without_media_is_recorded_as_before(ledger: IdempotencyLedger) -> None:
    runs: list[str] = []
    dispatcher = Dispatcher(_registry(runs, ()), ledger=ledger)
    first = await dispatcher.dispatch([_call("toolu_1")], request_id="r-1")
    entry = await ledger.get(first[0].key or "")
    assert entry is not None and entry.content == ["Chart for Rome"]


def test_the_record_format_is_unambiguous() -> None:
    assert recorded_content({"a": 1}) == {"a": 1}
    assert replayed_parts({"a": 1}) == ({"a": 1}, (), [])
    # A content that looks like the envelope is wrapped, and reads back as itself.
    lookalike = recorded_content("x", MEDIA[:1])
    assert isinstance(lookalike, dict)
    wrapped = recorded_content(lookalike)
    assert wrapped != lookalike
    assert replayed_parts(wrapped) == (lookalike, (), [])
    assert replayed_parts(lookalike) == ("x", MEDIA[:1], [])
    # A hand-edited part that cannot be read is left out; the replay still happens.
    broken = dict(lookalike, media=[{"kind": "image", "data": "not base64!"}, 7])
    assert replayed_parts(broken) == ("x", (), [])
    assert MAX_RECORDED_MEDIA_BYTES >= 5 * 1024 * 1024
