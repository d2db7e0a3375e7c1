"""A corpus folder's manifest: what it may say, and one typed error for each way it can be
wrong (the shared corpus and a recorded one are read by `check`, `fuzz` and the plugin)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from sse_toolcalls.errors import UsageError
from sse_toolcalls.tooling.corpus import manifest


def folder_with(tmp_path: Path, entries: Any) -> Path:
    (tmp_path / manifest.MANIFEST).write_bytes(orjson.dumps(entries))
    return tmp_path


def test_a_folder_without_a_manifest_is_every_stream_below_it(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.sse").write_bytes(b"")
    (tmp_path / "one.sse").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("not a stream")
    entries = manifest.load(tmp_path)
    assert [(e.file, e.dialect, e.expected) for e in entries] == [
        ("b/two.sse", None, None),
        ("one.sse", None, None),
    ]


def test_an_entry_keeps_what_it_says(tmp_path: Path) -> None:
    expected = {"outcome": "complete", "calls": [{"name": "f", "args": {}}]}
    folder = folder_with(
        tmp_path,
        [
            {"file": "a.sse", "provider": "openai_compat_groq", "expected": expected},
            {"file": "b.sse", "dialect": "gemini", "chunks": [3, 4], "status": 200},
        ],
    )
    first, second = manifest.load(folder)
    # A vendor of the OpenAI-compatible kind speaks Chat.
    assert (first.dialect, first.expected, first.chunks) == ("openai_chat", expected, None)
    assert (second.dialect, second.chunks) == ("gemini", (3, 4))
    assert second.extra == {"dialect": "gemini", "status": 200}


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    manifest.write(tmp_path, [{"file": "x.sse", "dialect": "anthropic"}])
    assert not list(tmp_path.glob("*.tmp"))  # the scratch file was moved into place
    (entry,) = manifest.load(tmp_path)
    assert (entry.file, entry.dialect) == ("x.sse", "anthropic")


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a folder"):
        manifest.load(tmp_path / "missing")


def test_a_manifest_that_is_not_json(tmp_path: Path) -> None:
    (tmp_path / manifest.MANIFEST).write_bytes(b"[{")
    with pytest.raises(UsageError, match="cannot read"):
        manifest.load(tmp_path)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"file": "a.sse"}, "expected a JSON list of entries"),
        (["a.sse"], 'entry 0 has no "file"'),
        ([{"file": "a.sse"}, {"dialect": "gemini"}], 'entry 1 has no "file"'),
        ([{"file": "a.sse", "dialect": "cohere"}], "unknown dialect 'cohere'"),
        ([{"file": "a.sse", "expected": {"outcome": "fine"}}], '"expected" needs an outcome'),
        ([{"file": "a.sse", "expected": {"outcome": "complete", "calls": {}}}], '"expected"'),
        ([{"file": "a.sse", "expected": "complete"}], '"expected" needs an outcome'),
        ([{"file": "a.sse", "chunks": [3, 0]}], '"chunks" must be a list of positive'),
        ([{"file": "a.sse", "chunks": [True]}], '"chunks" must be a list of positive'),
        ([{"file": "a.sse", "chunks": "3,4"}], '"chunks" must be a list of positive'),
    ],
)
def test_each_malformed_manifest_is_named(tmp_path: Path, entries: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        manifest.load(folder_with(tmp_path, entries))


@pytest.mark.parametrize("name", ["/etc/passwd", "../secret.sse", "a/../../b.sse", ""])
def test_a_file_outside_the_folder_is_refused(tmp_path: Path, name: str) -> None:
    # Before: `check` and `fuzz` read whatever path a (shared) manifest named.
    with pytest.raises(UsageError, match='"file" must name a file inside'):
        manifest.load(folder_with(tmp_path, [{"file": name}]))


def test_a_folders_own_manifest_is_read_with_the_corpus_and_alone(tmp_path: Path) -> None:
    # The shared corpus's layout: bedrock/MANIFEST.json names its files from the root.
    (tmp_path / "a.sse").write_bytes(b"")
    inner = tmp_path / "bedrock"
    inner.mkdir()
    (inner / "x.eventstream").write_bytes(b"")
    folder_with(tmp_path, [{"file": "a.sse", "provider": "anthropic"}])
    (inner / manifest.MANIFEST).write_bytes(
        orjson.dumps([{"file": "bedrock/x.eventstream", "provider": "bedrock_invoke_anthropic"}])
    )
    assert [(e.file, e.dialect) for e in manifest.load(tmp_path)] == [
        ("a.sse", "anthropic"),
        ("bedrock/x.eventstream", "bedrock_anthropic"),
    ]
    # Alone, the same stream is found in the folder: the name only loses its first part.
    (entry,) = manifest.load(inner)
    assert (entry.file, entry.dialect) == ("x.eventstream", "bedrock_anthropic")
    assert manifest.read_stream(inner, entry.file) == b""


def test_a_folder_without_a_manifest_has_its_event_streams_too(tmp_path: Path) -> None:
    (tmp_path / "one.sse").write_bytes(b"")
    (tmp_path / "two.eventstream").write_bytes(b"\x00")
    assert [e.file for e in manifest.load(tmp_path)] == ["one.sse", "two.eventstream"]
