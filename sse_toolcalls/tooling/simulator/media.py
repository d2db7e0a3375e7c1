"""Images and documents in tool results, checked as each API checks their shape.

- Anthropic: a ``tool_result``'s ``content`` is text or a list of ``text``, ``image`` and
  ``document`` blocks; an image or document has a ``source`` of ``{"type": "base64",
  "media_type", "data"}`` (images: JPEG, PNG, GIF, WebP; documents: PDF or plain text)
  or ``{"type": "url", "url"}``.
- Responses: a ``function_call_output``'s ``output`` is text or a list of
  ``input_text``, ``input_image`` (``image_url``: an http(s) URL or a base64 data URL;
  or ``file_id``) and ``input_file`` (``file_data``, a base64 data URL, with a
  ``filename``; or ``file_url`` / ``file_id``) items.
- Gemini: a ``functionResponse`` may hold ``parts``, each ``{"inlineData": {"mimeType",
  "data"}}`` or ``{"fileData": {"mimeType", "fileUri"}}``.
- Bedrock Converse: a ``toolResult``'s ``content`` is a list of ``text``, ``json``,
  ``image`` and ``document`` blocks; an image or document names its ``format`` (``png``,
  ``pdf``...) and carries ``source.bytes`` (base64 in the JSON) or an ``s3Location``.
- Chat Completions: a tool message's content is text (a string, or ``text`` parts only).

Each reader returns the MIME types of the media found and the problems, as sentences.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

_IMAGE_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}
_DOCUMENT_TYPES = {"application/pdf", "text/plain"}
_DATA_URL = re.compile(r"data:(?P<type>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)", re.DOTALL)

Found = tuple[list[str], list[str]]


def _is_base64(data: Any) -> bool:
    if not isinstance(data, str) or not data:
        return False
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_url(url: Any) -> bool:
    return isinstance(url, str) and url.startswith(("https://", "http://", "gs://"))


def anthropic(content: Any) -> Found:
    """Media types and problems of an Anthropic ``tool_result`` content."""
    types: list[str] = []
    problems: list[str] = []
    if isinstance(content, str) or content is None:
        return types, problems
    if not isinstance(content, list):
        return types, ["tool_result.content must be a string or a list of blocks"]
    for n, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        where = f"tool_result.content.{n}"
        if kind == "text":
            if not isinstance(block.get("text"), str) or not block["text"]:
                problems.append(f"{where}: text content blocks must be non-empty")
            continue
        if kind not in ("image", "document"):
            problems.append(f"{where}.type: {kind!r} is not a tool_result content block")
            continue
        assert isinstance(block, dict)
        source = block.get("source")
        source_type = source.get("type") if isinstance(source, dict) else None
        if source_type == "url" and isinstance(source, dict) and _is_url(source.get("url")):
            types.append(f"{kind}:url")
            continue
        allowed = _IMAGE_TYPES if kind == "image" else _DOCUMENT_TYPES
        media_type = source.get("media_type") if isinstance(source, dict) else None
        if source_type != "base64" or not isinstance(media_type, str) or media_type not in allowed:
            problems.append(f"{where}.source: a {kind} needs a base64 source of {sorted(allowed)}")
        elif not _is_base64(source.get("data") if isinstance(source, dict) else None):
            problems.append(f"{where}.source.data: not valid base64")
        else:
            types.append(str(media_type))
    return types, problems


def responses(output: Any) -> Found:
    """Media types and problems of a Responses ``function_call_output`` output."""
    types: list[str] = []
    problems: list[str] = []
    if isinstance(output, str):
        return types, problems
    if not isinstance(output, list):
        return types, ["function_call_output.output must be a string or a list"]
    for n, item in enumerate(output):
        kind = item.get("type") if isinstance(item, dict) else None
        where = f"output[{n}]"
        if not isinstance(item, dict) or kind not in ("input_text", "input_image", "input_file"):
            problems.append(f"{where}.type: {kind!r} is not a function call output item")
        elif kind == "input_text":
            if not isinstance(item.get("text"), str):
                problems.append(f"{where}.text: expected a string")
        elif kind == "input_image":
            url = item.get("image_url")
            match = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
            if match is not None and match["type"] in _IMAGE_TYPES and _is_base64(match["data"]):
                types.append(match["type"])
            elif _is_url(url) or isinstance(item.get("file_id"), str):
                types.append("image:url")
            else:
                problems.append(f"{where}.image_url: expected a URL or a base64 image data URL")
        else:
            data = item.get("file_data")
            match = _DATA_URL.fullmatch(data) if isinstance(data, str) else None
            if match is not None and _is_base64(match["data"]):
                if not isinstance(item.get("filename"), str):
                    problems.append(f"{where}.filename: file_data needs a filename")
                types.append(match["type"])
            elif _is_url(item.get("file_url")) or isinstance(item.get("file_id"), str):
                types.append("document:url")
            else:
                problems.append(f"{where}: an input_file needs file_data, file_url or file_id")
    return types, problems


def gemini(function_response: dict[str, Any]) -> Found:
    """Media types and problems of a Gemini ``functionResponse``'s ``parts``."""
    types: list[str] = []
    problems: list[str] = []
    parts = function_response.get("parts")
    if parts is None:
        return types, problems
    if not isinstance(parts, list):
        return types, ["functionResponse.parts must be a list"]
    for n, part in enumerate(parts):
        where = f"functionResponse.parts[{n}]"
        inline = part.get("inlineData") if isinstance(part, dict) else None
        file = part.get("fileData") if isinstance(part, dict) else None
        if isinstance(inline, dict):
            if not isinstance(inline.get("mimeType"), str) or not _is_base64(inline.get("data")):
                problems.append(f"{where}.inlineData: needs a mimeType and base64 data")
            else:
                types.append(inline["mimeType"])
        elif isinstance(file, dict) and _is_url(file.get("fileUri")):
            types.append("file:url")
        else:
            problems.append(f"{where}: expected inlineData or fileData")
    return types, problems


# Converse names a format, not a MIME type (the Converse API reference, ImageBlock and
# DocumentBlock).
_CONVERSE_IMAGES = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
}
_CONVERSE_DOCUMENTS = {
    "pdf": "application/pdf",
    "csv": "text/csv",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "html": "text/html",
    "txt": "text/plain",
    "md": "text/markdown",
}
# "The name can only contain alphanumeric characters, whitespace characters, hyphens,
# parentheses, and square brackets", never two whitespace characters in a row
# (DocumentBlock.name).
_DOCUMENT_NAME = re.compile(r"(?!.*\s\s)[A-Za-z0-9\s\-()\[\]]+")
_CONVERSE_RESULT_KINDS = ("text", "json", "image", "document", "video")


def converse(content: Any) -> Found:
    """Media types and problems of a Bedrock Converse ``toolResult``'s ``content``: a
    list of blocks, each exactly one of ``text``, ``json``, ``image`` (``format``,
    ``source.bytes`` in base64), ``document`` (also a ``name``) or ``video``."""
    types: list[str] = []
    problems: list[str] = []
    if not isinstance(content, list):
        return types, ["toolResult.content must be a list of content blocks"]
    for n, block in enumerate(content):
        where = f"toolResult.content.{n}"
        keys = list(block) if isinstance(block, dict) else []
        if len(keys) != 1 or keys[0] not in _CONVERSE_RESULT_KINDS:
            problems.append(f"{where}: expected exactly one of {list(_CONVERSE_RESULT_KINDS)}")
            continue
        assert isinstance(block, dict)
        kind = keys[0]
        value = block[kind]
        if kind == "text":
            if not isinstance(value, str):
                problems.append(f"{where}.text: expected a string")
            continue
        if kind == "json":
            continue
        if kind == "video":
            problems.append(f"{where}.video: a tool result of this model cannot carry video")
            continue
        formats = _CONVERSE_IMAGES if kind == "image" else _CONVERSE_DOCUMENTS
        fmt = value.get("format") if isinstance(value, dict) else None
        source = value.get("source") if isinstance(value, dict) else None
        if not isinstance(fmt, str) or fmt not in formats:
            problems.append(f"{where}.{kind}.format: expected one of {sorted(formats)}")
            continue
        assert isinstance(value, dict)
        if kind == "document":
            name = value.get("name")
            if not isinstance(name, str) or not _DOCUMENT_NAME.fullmatch(name):
                problems.append(
                    f"{where}.document.name: only alphanumeric characters, single whitespace "
                    "characters, hyphens, parentheses and square brackets are allowed"
                )
                continue
        data = source.get("bytes") if isinstance(source, dict) else None
        location = source.get("s3Location") if isinstance(source, dict) else None
        if isinstance(location, dict) and isinstance(location.get("uri"), str):
            types.append(f"{kind}:url")
        elif not _is_base64(data):
            problems.append(f"{where}.{kind}.source.bytes: not valid base64")
        else:
            types.append(formats[fmt])
    return types, problems


def chat(content: Any) -> Found:
    """Problems of a Chat tool message's content (it takes text only)."""
    if isinstance(content, str):
        return [], []
    if isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") == "text" for p in content
    ):
        return [], []
    return [], ["a tool message's content must be text (a string or text parts)"]


__all__ = ["anthropic", "chat", "converse", "gemini", "responses"]
