"""Checks of a tool catalogue's descriptions, as a model needs them.

A model chooses a tool and fills its arguments from the names, descriptions and schemas
alone. :func:`lint_tools` (and :meth:`ToolRegistry.lint`) reads a catalogue the way a model
would and returns a :class:`Finding` for each thing that makes a call likelier to go wrong.
The checks are heuristics over English text, kept narrow on purpose: each fires on a
pattern, documented below, that a reviewer can see in the finding's message.

| Code | Fires when |
|---|---|
| ``tool_description_missing`` | the tool has no description |
| ``tool_description_vague`` | the description has fewer than :data:`MIN_DESCRIPTION_WORDS` words, or only repeats the name |
| ``tool_when_to_use`` | the description says what the tool does but not when to use it: none of the usage cues (``use``, ``call``, ``when``, ``if``, ``only``, ``before``, ``after``, ``instead``, ``useful``, ``for questions``...) |
| ``parameter_description_missing`` | a parameter (also a nested property, ``location.lat``, ``items[].name``) has no description |
| ``enum_values_unlisted`` | a string (or untyped) parameter's description lists its choices (``one of``, ``either ... or``, ``possible values``, two or more quoted alternatives not introduced as examples; not an open list with ``etc.``, a range or a layout) but its schema has no ``enum`` (or ``const``), so nothing tells the model, nor the validator, what is allowed |
| ``format_undeclared`` | a string parameter's name says date, date-time, email or URL (a name token ``date``, ``datetime``/``timestamp`` or ``date`` with ``time``, ``email``, ``url``/``uri``/``href``/``website``) and its schema declares neither ``format`` nor ``pattern`` |
| ``tools_overlap`` | two tools are so alike (see below) that a model may not be able to choose |
| ``escape_hatch`` | a generic escape hatch: a free-form string parameter named for code (``cmd``, ``command``, ``script``, ``code``, ``sql``...) where the tool's name or description or the parameter's says it is run (``run``, ``execute``, ``shell``, ``system``, ``eval``...), or a tool named for a shell or an evaluator (``shell``, ``bash``, ``exec``, ``eval``, ``terminal``...) with a free-form string parameter; specific tools are safer (their effects can be named, checked and sandboxed) and easier to call right |

**The overlap measure.** Each tool becomes a bag of word tokens: its name's tokens, each
once (``get_weather``, ``getWeather`` and ``weather.get_weather`` all give ``get``,
``weather``) and their ordered pairs (``get>weather``, so that
``celsius_to_fahrenheit`` and ``fahrenheit_to_celsius`` differ), both counted twice because
the name is what a model reads first; its description's tokens; and its parameters' names. Tokens are lower-cased, stop words (``the``, ``a``, ``of``...) dropped and
a plural ``s`` removed. The similarity of two tools is the cosine of their token-count
vectors (0: no word in common, 1: the same words in the same proportions). Pairs at or
above :data:`OVERLAP_THRESHOLD` are reported, with the score.

**A catalogue's boilerplate is left out of it.** Text that opens (or closes) the
description of every tool of a catalogue of :data:`MIN_BOILERPLATE_TOOLS` or more, and
holds at least one whole sentence, says which family the tools belong to, not which one to
pick: BFCL's multi-turn docs open each tool with two sentences about its API ("This tool
belongs to the Gorilla file system. It is a simple file system that ... Tool
description:"), which made ``cat`` and ``diff`` 0.89 alike, and 99 of the file system's
153 pairs overlap. The pair measure (:func:`similarity`) knows no catalogue, so it has no
such rule.
"""  # noqa: E501

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ...calls import ToolSpec

__all__ = [
    "FINDING_CODES",
    "MIN_DESCRIPTION_WORDS",
    "OVERLAP_THRESHOLD",
    "Finding",
    "lint_tools",
    "similarity",
    "tokens",
]

FINDING_CODES = (
    "tool_description_missing",
    "tool_description_vague",
    "tool_when_to_use",
    "parameter_description_missing",
    "enum_values_unlisted",
    "format_undeclared",
    "tools_overlap",
    "escape_hatch",
)
"""Every finding code, in the order the checks run (see the module docstring)."""

MIN_DESCRIPTION_WORDS = 4
"""Fewest words a tool description needs to say what the tool does: "Get the weather"
names an action, "Weather" does not."""

OVERLAP_THRESHOLD = 0.845
"""Similarity (cosine of token counts, see the module docstring) from which two tools are
reported as overlapping. Chosen on BFCL's single-turn catalogues (2026-12-01): the pairs
from 0.845 up were near-duplicates (``upload_vex`` beside ``upload_vex1`` at 0.91,
``get_access_logs`` beside ``get_audit_logs`` at 0.85, ``get_latest_rate`` beside
``get_rate`` at 0.850); the next ones down were pairs a reader tells apart by one decisive
word (``celsius_to_fahrenheit`` and its inverse at 0.839, ``get_`` and ``set_website_geo_
mapping_rules`` at 0.835, one-way and round-trip flight searches at 0.80)."""


MIN_BOILERPLATE_TOOLS = 3
"""Fewest tools whose shared opening or closing text is taken for the catalogue's
boilerplate (see the module docstring): two tools that open with the same sentence may
be two versions of one tool, which is what the overlap check is for."""

MAX_SCHEMA_DEPTH = 16
"""Deepest nesting of properties walked for parameter checks, in levels; a deeper (or a
self-referencing) schema is left unchecked below this depth rather than walked forever."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One thing in a catalogue that makes a model's call likelier to go wrong."""

    code: str
    """What kind of problem it is (one of :data:`FINDING_CODES`)."""

    tool: str
    """The tool it is about (for ``tools_overlap``, the first of the two)."""

    parameter: str | None = None
    """The parameter it is about, as a path (``unit``, ``location.lat``, ``items[].name``),
    or ``None`` for the tool itself."""

    message: str
    """One sentence saying what is wrong and what to write instead."""


# --------------------------------------------------------------------------------------
# Words

# fmt: off
_STOP_WORDS = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "by", "with", "from",
    "at", "as", "is", "are", "be", "this", "that", "it", "its", "into", "given", "which",
    "what", "will", "can", "may", "any", "all", "each", "per", "their", "your", "you",
})
# fmt: on
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+")


def _words(text: str) -> list[str]:
    """Lower-case words of ``text``, camelCase and snake_case split."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(part.lower() for part in _CAMEL.split(word) if part)
    return out


def _stem(word: str) -> str:
    # A plural "s" only: "forecasts" and "forecast" are one word to a reader; anything
    # cleverer (Porter) merges words a reader keeps apart.
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` for the overlap measure: words, lower-cased, stop words
    dropped, plural ``s`` removed."""
    return [_stem(w) for w in _words(text) if w not in _STOP_WORDS]


def _bag(spec: ToolSpec, description: str | None = None) -> Counter[str]:
    # Each name word once: a namespace that repeats the name (``api_token_api.APITokenApi.
    # get_api_tokens``) would otherwise outweigh the one word that tells two tools apart.
    name = list(dict.fromkeys(tokens(spec.name)))
    # Ordered pairs keep celsius_to_fahrenheit apart from fahrenheit_to_celsius.
    pairs = [f"{a}>{b}" for a, b in itertools.pairwise(name)]
    properties = spec.parameters.get("properties")
    params = " ".join(properties) if isinstance(properties, dict) else ""
    text = spec.description if description is None else description
    return Counter([*name, *name, *pairs, *pairs, *tokens(text), *tokens(params)])


def similarity(a: ToolSpec, b: ToolSpec) -> float:
    """The overlap measure of two tools (see the module docstring): 0.0 to 1.0."""
    return _cosine(_bag(a), _bag(b))


def _without_boilerplate(descriptions: Sequence[str]) -> list[str]:
    """``descriptions`` without the whole sentences all of them open or close with, when
    there are :data:`MIN_BOILERPLATE_TOOLS` or more (see the module docstring)."""
    if len(descriptions) < MIN_BOILERPLATE_TOOLS:
        return list(descriptions)
    head = _common_prefix(descriptions)
    # Up to the last sentence end the text has in common: "Get the weather" and "Get
    # the wind" share words, not a sentence, and keep them.
    ends = [m.end() for m in _SENTENCE_BREAK.finditer(head)]
    rest = [d[ends[-1] :] for d in descriptions] if ends else list(descriptions)
    tail = _shared_tail(rest)
    return [d[: len(d) - len(tail)] for d in rest]


_SENTENCE_BREAK = re.compile(r"[.!?:]\s+")


def _common_prefix(texts: Sequence[str]) -> str:
    """The longest text every one of ``texts`` starts with."""
    first, last = min(texts), max(texts)
    n = 0
    while n < len(first) and first[n] == last[n]:
        n += 1
    return first[:n]


def _shared_tail(texts: Sequence[str]) -> str:
    """The longest run of whole sentences every one of ``texts`` ends with, or ``""``."""
    tail = _common_prefix([t[::-1] for t in texts])[::-1]
    cut = 0
    while tail[cut:].strip():
        shared = tail[cut:]
        before = [t[: len(t) - len(shared)].rstrip() for t in texts]
        if all(not b or b[-1] in ".!?:" for b in before):
            return shared
        # Not a sentence's start in every text: from the next sentence on, if any.
        match = _SENTENCE_BREAK.search(tail, cut)
        if match is None:
            return ""
        cut = match.end()
    return ""


def _cosine(x: Counter[str], y: Counter[str]) -> float:
    dot = sum(count * y[token] for token, count in x.items())
    norm = math.sqrt(sum(c * c for c in x.values())) * math.sqrt(sum(c * c for c in y.values()))
    return dot / norm if norm else 0.0


# --------------------------------------------------------------------------------------
# Checks of one tool

# Words that tell a model *when* to pick a tool, not only what it does.
_WHEN_CUES = re.compile(
    r"\b(use|used|using|call|invoke|when|whenever|if|unless|only|before|after|instead|"
    r"useful|prefer|for (?:questions|requests|queries|tasks|cases))\b",
    re.IGNORECASE,
)
# "one of" introduces choices only when they follow (quoted, after a colon, or a list
# joined by commas or "or"): "One of the competing teams in the game" (BFCL's
# basketball.game_stats) is a noun.
_CHOICE_CUES = re.compile(
    r"\bone of\b(?=[^.]*?['\"`:])|\bone of\s+\w+(?:\s*(?:,|\bor\b)\s*\w+)+|\beither\b.{1,80}\bor\b|"
    r"\b(?:possible|allowed|valid|accepted|supported) (?:values|options)\b|"
    r"\boptions (?:are|include)\b",
    re.IGNORECASE,
)
_QUOTED_ALTERNATIVES = re.compile(
    r"""(['"`])[^'"`]{1,40}\1\s*(?:,|/|\bor\b|\|)\s*(?:or\s+)?(['"`])[^'"`]{1,40}\2"""
)
_EXAMPLE_CUES = re.compile(
    r"\be\.?g\b|\bexamples?\b|\bsuch as\b|\bfor instance\b|\blike\b", re.IGNORECASE
)
# Words that make a list of values open ("... etc."), a range ("from 1 to 6", "['from',
# 'to')") or a layout ("the structure: '{...}'", "formatted as 'City, State' or 'City,
# Country'"): no closed set an enum could hold.
_OPEN_CUES = re.compile(
    r"\betc\b|\branges?\b|\bstructure\b|\bformat(?:ted)?\b|\bin the form\b", re.IGNORECASE
)
_CODE_PARAMETERS = frozenset(
    {
        "cmd",
        "command",
        "commands",
        "shell",
        "shell_command",
        "script",
        "code",
        "source_code",
        "python_code",
        "sql",
        "sql_query",
        "bash",
        "powershell",
        "program",
    }
)
_CODE_TOOL_WORDS = frozenset(
    {"shell", "bash", "exec", "execute", "eval", "terminal", "powershell", "subprocess", "sh"}
)
# A parameter named for code is an escape hatch only when something says it is run: a
# ``command`` naming the command to show help for is not one.
_RUN_WORDS = frozenset(
    {
        "run",
        "runs",
        "execute",
        "executes",
        "execution",
        "exec",
        "eval",
        "evaluate",
        "shell",
        "system",
        "terminal",
        "script",
        "bash",
        "powershell",
        "subprocess",
        "sh",
        "sql",
        "query",
    }
)


# A last name word that makes the value something *about* a date or a URL, not one:
# ``websiteId`` identifies a website, ``date_format`` is a layout, ``date_range`` two
# dates, ``UrlName`` a slug (all four in BFCL's single-turn docs, 14 findings, all false).
_NOT_THE_VALUE = frozenset(
    {"id", "uuid", "key", "name", "slug", "format", "range", "type", "kind", "pattern"}
)


def _format_for(name: str) -> str | None:
    """The ``format`` a parameter's name says it holds, or ``None``."""
    named = [_stem(w) for w in _words(name)]
    if not named or named[-1] in _NOT_THE_VALUE:
        return None
    words = set(named)
    if "datetime" in words or "timestamp" in words or {"date", "time"} <= words:
        return "date-time"
    if "date" in words or "birthday" in words:
        return "date"
    if "email" in words:
        return "email"
    if words & {"url", "uri", "href", "website"}:
        return "uri"
    return None


# A date layout spelled in a description: "MM-DD-YYYY", "dd/mm/yyyy", "YYYY-MM-DD HH:mm:ss",
# "DD MMM, YYYY", "YYYY-MM-DDTHH:MM:SSZ".
_LAYOUT = re.compile(
    r"(?<![A-Za-z])[YyMmDd]{2,4}(?:[-/.,: T]{1,2}[YyMmDdHhSsZ]{1,4}){1,6}(?![A-Za-z])"
)
# The layouts each format takes (RFC 3339; a date-time needs its offset).
_FORMAT_LAYOUTS = {
    "date": re.compile(r"YYYY-MM-DD"),
    "date-time": re.compile(r"YYYY-MM-DD[T ]HH:MM:SS(?:\.S+)?(?:Z|[+-]HH:?MM)"),
}
_QUOTED = re.compile(r"""(['"`])([^'"`]{1,80})\1""")
# Words a free-text date takes: a format would refuse "today".
_RELATIVE_DAYS = re.compile(r"\b(?:today|tomorrow|yesterday|tonight|weekend)\b", re.I)


def _format_advice(wanted: str, description: str) -> str | None:
    """What to tell a parameter whose name says ``wanted``, from its description; ``None``
    where the description shows that the format would refuse the tool's own values.

    The finding was always 'add "format"', which is wrong advice where the tool wants
    another layout ("MM-DD-YYYY": the format would refuse every value the tool takes; 32 of
    BFCL's 161 single-turn findings) and no finding at all where the value is free text
    ("today", "this weekend") or no URI ("example.com", "without the HTTPS schema").
    """
    from .formats import is_date, is_date_time, is_email, is_uri

    layouts = [m.group().upper() for m in _LAYOUT.finditer(description)]
    quoted = [m.group(2) for m in _QUOTED.finditer(description) if m.group(2).strip()]
    examples = [text for text in quoted if not _LAYOUT.fullmatch(text)]
    # A "date" that the description shows with its time: the format is date-time.
    if wanted == "date" and (layouts or examples):
        stamps = _FORMAT_LAYOUTS["date-time"]
        if all(stamps.fullmatch(layout) for layout in layouts) and all(
            is_date_time(example) for example in examples
        ):
            wanted = "date-time"
    accepted = _FORMAT_LAYOUTS.get(wanted)
    if accepted is not None:
        if _RELATIVE_DAYS.search(description):
            return None
        other = [layout for layout in layouts if not accepted.fullmatch(layout)]
        if other:
            return (
                f"its description gives the layout {other[0]!r}, which no JSON Schema "
                'format is: declare it with a "pattern" so that the model and the '
                "validator know it"
            )
    checks = {"date": is_date, "date-time": is_date_time, "email": is_email, "uri": is_uri}
    if any(not checks[wanted](example) for example in examples):
        return None
    return f'its name says {wanted} but it declares no format: add "format": {wanted!r}'


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def _is_free_string(schema: dict[str, Any]) -> bool:
    return (
        "string" in _types(schema)
        and "enum" not in schema
        and "const" not in schema
        and "pattern" not in schema
        and "format" not in schema
    )


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a local ``$ref`` (``#/$defs/X``) followed once; ``{}`` if not a dict."""
    if not isinstance(schema, dict):
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        if isinstance(target, dict):
            return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _parameters(
    schema: dict[str, Any], root: dict[str, Any], prefix: str = "", depth: int = 0
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every named property under ``schema`` as ``(path, schema)``, nested ones too."""
    if depth > MAX_SCHEMA_DEPTH:
        return
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            resolved = _resolve(sub, root)
            path = f"{prefix}{name}"
            yield path, resolved
            yield from _nested(resolved, root, path, depth + 1)


def _nested(
    schema: dict[str, Any], root: dict[str, Any], path: str, depth: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    yield from _parameters(schema, root, path + ".", depth)
    items = _resolve(schema.get("items"), root)
    if items:
        yield from _parameters(items, root, path + "[].", depth)
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list):
            for member in members:
                yield from _parameters(_resolve(member, root), root, path + ".", depth)


def _check_tool(spec: ToolSpec) -> Iterator[Finding]:
    name, description = spec.name, spec.description.strip()
    words = _words(description)
    if not description:
        yield Finding(
            code="tool_description_missing",
            tool=name,
            message="has no description: say what it does and when to use it",
        )
    elif len(words) < MIN_DESCRIPTION_WORDS or set(words) <= set(_words(name)):
        yield Finding(
            code="tool_description_vague",
            tool=name,
            message=(
                f"description {description[:60]!r} is too short to say what the tool does; "
                "name the action, its object and its result"
            ),
        )
    if description and not _WHEN_CUES.search(description):
        yield Finding(
            code="tool_when_to_use",
            tool=name,
            message=(
                "says what it does but not when to use it; add a sentence such as "
                "'Use it when the user asks ...'"
            ),
        )
    root = spec.parameters
    free_strings: list[str] = []
    for path, schema in _parameters(root, root):
        yield from _check_parameter(name, path, schema)
        if "." not in path and "[" not in path and _is_free_string(schema):
            free_strings.append(path)
    said = set(_words(name)) | set(words)
    hatch = [
        p
        for p in free_strings
        if p.lower() in _CODE_PARAMETERS
        and (said | set(_words(str(root["properties"][p].get("description", ""))))) & _RUN_WORDS
    ]
    if hatch:
        yield Finding(
            code="escape_hatch",
            tool=name,
            parameter=hatch[0],
            message=(
                f"takes free-form code in {hatch[0]!r}: a generic escape hatch; offer "
                "specific tools for the tasks it serves, or constrain the parameter"
            ),
        )
    elif free_strings and set(_words(name)) & _CODE_TOOL_WORDS:
        yield Finding(
            code="escape_hatch",
            tool=name,
            parameter=free_strings[0],
            message=(
                "runs whatever its free-form string says: a generic escape hatch; offer "
                "specific tools for the tasks it serves"
            ),
        )


def _check_parameter(tool: str, path: str, schema: dict[str, Any]) -> Iterator[Finding]:
    text = schema.get("description")
    text = text.strip() if isinstance(text, str) else ""
    if not text and not isinstance(schema.get("title"), str):
        yield Finding(
            code="parameter_description_missing",
            tool=tool,
            parameter=path,
            message="has no description: say what the value means, its unit or form",
        )
    # Only a string (or untyped) value: "valid values are integers from 1 to 10" wants
    # a minimum and a maximum, not an enum.
    textual = not _types(schema) or "string" in _types(schema)
    if textual and text and "enum" not in schema and "const" not in schema and _lists_choices(text):
        yield Finding(
            code="enum_values_unlisted",
            tool=tool,
            parameter=path,
            message=(
                "the description lists its allowed values but the schema has no enum: "
                "declare them as an enum so that the model (and the validator) knows them"
            ),
        )
    wanted = _format_for(path.rsplit(".", 1)[-1].removesuffix("[]"))
    target = schema
    if "array" in _types(schema) and isinstance(schema.get("items"), dict):
        target = schema["items"]
    if (
        wanted is not None
        and "string" in _types(target)
        and "format" not in target
        and "pattern" not in target
        and "enum" not in target
    ):
        advice = _format_advice(wanted, text)
        if advice is not None:
            yield Finding(code="format_undeclared", tool=tool, parameter=path, message=advice)


def _lists_choices(text: str) -> bool:
    if _OPEN_CUES.search(text):
        return False
    if _CHOICE_CUES.search(text):
        return True
    match = _QUOTED_ALTERNATIVES.search(text)
    return match is not None and not _EXAMPLE_CUES.search(text[: match.start()])


# --------------------------------------------------------------------------------------
# The catalogue


def lint_tools(
    specs: Iterable[ToolSpec], *, overlap_threshold: float = OVERLAP_THRESHOLD
) -> list[Finding]:
    """Check a catalogue's descriptions (see the module docstring for every check).

    Args:
        specs: The tools, as the model sees them.
        overlap_threshold: Similarity from which two tools are reported as overlapping.

    Returns:
        The findings: each tool's own in catalogue order, then the overlapping pairs.
    """
    tools: Sequence[ToolSpec] = list(specs)
    findings: list[Finding] = []
    for spec in tools:
        findings.extend(_check_tool(spec))
    own = _without_boilerplate([spec.description for spec in tools])
    bags = [_bag(spec, text) for spec, text in zip(tools, own, strict=True)]
    for i, a in enumerate(tools):
        for j in range(i + 1, len(tools)):
            score = _cosine(bags[i], bags[j])
            if score >= overlap_threshold:
                b = tools[j]
                findings.append(
                    Finding(
                        code="tools_overlap",
                        tool=a.name,
                        message=(
                            f"overlaps {b.name!r} (similarity {score:.2f}): say in each "
                            "description when to use it rather than the other"
                        ),
                    )
                )
    return findings
