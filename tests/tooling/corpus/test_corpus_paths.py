"""Issue 29, item 6: a corpus names streams inside its own folder only; `check` never
reads (nor prints) a file outside it, and a path no file system takes is a typed error
with exit status 2, never a traceback."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from sse_toolcalls import UsageError
from sse_toolcalls.tooling.cli import main
from sse_toolcalls.tooling.corpus import StreamResult, check_corpus
from sse_toolcalls.tooling.corpus.fuzz import corpus_seeds
from sse_toolcalls.tooling.corpus.manifest import CorpusPathError, load, read_stream, stream_path

SECRET_LINE = "root:TOPSECRET-HASH:0:0"


def outside_stream(folder: Path) -> Path:
    """A stream outside the corpus whose call would show its content in a failure line."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "secret.sse"
    event = {"type": "content_block_start", "index": 0}
    event["content_block"] = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    delta = {"type": "content_block_delta", "index": 0}
    delta["delta"] = {"type": "input_json_delta", "partial_json": json.dumps({"x": SECRET_LINE})}
    lines = [
        ("message_start", {"type": "message_start", "message": {"usage": {}}}),
        ("content_block_start", event),
        ("content_block_delta", delta),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_stop", {"type": "message_stop"}),
    ]
    target.write_text("".join(f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in lines))
    return target


def corpus_with(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    entry = {"file": name, "dialect": "anthropic", "expected": {"outcome": "no_calls", "calls": []}}
    (folder / "MANIFEST.json").write_text(json.dumps([entry]))
    return folder


def run_check(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["check", str(folder)])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_symlinked_entry_leading_outside_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: check followed the link, parsed the outside file and printed its call.
    secret = outside_stream(tmp_path / "elsewhere")
    corpus = corpus_with(tmp_path / "corpus", "leak.sse")
    (corpus / "leak.sse").symlink_to(secret)
    status, out, _ = run_check(corpus, capsys)
    assert status == 1
    assert "refused" in out and "leads outside" in out
    assert "TOPSECRET" not in out


def test_a_symlinked_folder_leading_outside_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside_stream(tmp_path / "elsewhere")
    corpus = corpus_with(tmp_path / "corpus", "sub/secret.sse")
    (corpus / "sub").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    status, out, _ = run_check(corpus, capsys)
    assert status == 1 and "leads outside" in out and "TOPSECRET" not in out


def test_a_corpus_without_a_manifest_does_not_follow_links_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = outside_stream(tmp_path / "elsewhere")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "leak.sse").symlink_to(secret)
    status, out, _ = run_check(corpus, capsys)
    assert status == 1 and "leads outside" in out and "TOPSECRET" not in out


def test_a_link_that_stays_inside_is_followed(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    real = outside_stream(corpus / "real")
    corpus_with(corpus, "alias.sse")
    (corpus / "alias.sse").symlink_to(real)
    assert read_stream(corpus, "alias.sse") == real.read_bytes()
    assert stream_path(corpus, "alias.sse") == real.resolve()


@pytest.mark.parametrize(
    "name",
    [
        "a\x00b.sse",  # before: ValueError (embedded null byte), a traceback from check
        "a\nFAIL forged.sse",  # would forge a line of check's report
        "..\\..\\etc\\passwd",
        "C:secret.sse",
        "/etc/passwd",
        "../outside.sse",
        "",
    ],
    ids=["nul", "newline", "backslash", "drive", "absolute", "dotdot", "empty"],
)
def test_a_path_no_corpus_may_name_exits_2_in_one_line(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = corpus_with(tmp_path / "corpus", name)
    with pytest.raises(CorpusPathError):
        load(corpus)
    status, out, err = run_check(corpus, capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err and "inside" in err


def test_a_lone_surrogate_is_refused_as_a_path(tmp_path: Path) -> None:
    # orjson refuses it in a manifest already; a caller may hand the name in directly.
    with pytest.raises(CorpusPathError, match="encode"):
        read_stream(tmp_path, "bad\ud800.sse")


def test_a_fifo_is_refused_rather_than_waited_on(tmp_path: Path) -> None:
    corpus = corpus_with(tmp_path / "corpus", "pipe.sse")
    os.mkfifo(corpus / "pipe.sse")
    results: list[list[StreamResult]] = []
    thread = threading.Thread(target=lambda: results.append(check_corpus(corpus)), daemon=True)
    thread.start()
    thread.join(60)  # a hang guard only: the refusal takes no waiting at all
    assert not thread.is_alive(), "check blocked on a FIFO"
    ((result,),) = results
    assert "not a regular file" in str(result.problem)


def test_fuzz_refuses_the_same_links(tmp_path: Path) -> None:
    secret = outside_stream(tmp_path / "elsewhere")
    corpus = corpus_with(tmp_path / "corpus", "leak.sse")
    (corpus / "leak.sse").symlink_to(secret)
    with pytest.raises(UsageError, match="leads outside"):
        corpus_seeds(corpus)


def test_a_file_name_cannot_forge_a_line_of_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without a manifest every .sse file below the folder is a stream, its name the
    # author's: a newline in it would print a line of its own choosing.
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "x\nok   forged.sse").write_bytes(b"data: {}\n\n")
    status, out, _ = run_check(corpus, capsys)
    assert status == 1
    assert out.count("\n") == 2 and "\\n" in out.splitlines()[0]
