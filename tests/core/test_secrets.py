"""The spellings of a secret (``sse_toolcalls._secrets``): every one the module promises
is found, in any surrounding text, and credentials are read from every header form."""

from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import quote, unquote

from hypothesis import given
from hypothesis import strategies as st

from sse_toolcalls._secrets import REDACTED, SecretSet, credentials

SECRETS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=6, max_size=40
).filter(lambda s: s.strip() == s and len(s) >= 6)


def _spell(char: str, form: str) -> str:
    raw = char.encode()
    if form == "percent":
        return "".join(f"%{b:02X}" for b in raw)
    if form == "percent-twice":
        return "".join(f"%25{b:02x}" for b in raw)
    if form == "json":
        return (
            json.dumps(char, ensure_ascii=True)[1:-1] if ord(char) > 0x7F else f"\\u{ord(char):04x}"
        )
    if form == "html":
        return f"&#{ord(char)};"
    if form == "upper":
        return char.upper() if char.isascii() else char
    return char


@given(
    secret=SECRETS,
    forms=st.lists(
        st.sampled_from(["plain", "percent", "percent-twice", "json", "html", "upper"]),
        min_size=40,
        max_size=40,
    ),
    before=st.text(max_size=10),
    after=st.text(max_size=10),
)
def test_every_mix_of_spellings_is_found_and_redacted(
    secret: str, forms: list[str], before: str, after: str
) -> None:
    spelled = "".join(_spell(c, f) for c, f in zip(secret, forms, strict=False))
    secrets = SecretSet([secret])
    text = before + spelled + after
    assert secrets.found_in(text)
    redacted = secrets.redact(text)
    assert REDACTED in redacted
    # What is left, decoded the way a reader would, holds no whole secret.
    assert secret.lower() not in _decoded(redacted).lower()


def _decoded(text: str) -> str:
    for _ in range(3):
        text = unquote(text)
    text = re.sub(
        r"(?:\\u[0-9a-fA-F]{4})+",
        lambda m: (
            m.group(0)
            .encode()
            .decode("unicode_escape")
            .encode("utf-16", "surrogatepass")
            .decode("utf-16", "replace")
        ),
        text,
    )
    return html.unescape(text)


@given(secret=SECRETS, shift=st.integers(0, 2), pad=st.binary(min_size=3, max_size=3))
def test_base64_at_any_alignment_is_found(secret: str, shift: int, pad: bytes) -> None:
    blob = base64.b64encode(pad[:shift] + secret.encode() + pad).decode()
    if len(secret.encode()) >= 8:  # shorter ones leave too few whole characters
        assert SecretSet([secret]).found_in(f"token={blob}")


def test_credentials_in_every_header_form() -> None:
    key = "sk-abcdef123456"
    assert key in credentials([("AUTHORIZATION ", f"Bearer \t  {key}  ")], "http://h/")
    assert key in credentials([("X-Goog-Api-Key", key)], "http://h/")
    assert key in credentials([("x-my-vendor-token", key)], "http://h/")
    assert key in credentials([("cookie", f"a=1; sid={key}")], "http://h/")
    basic = base64.b64encode(f"user:{key}".encode()).decode()
    assert key in credentials([("authorization", f"Basic {basic}")], "http://h/")
    assert key in credentials([], f"http://h/x?KEY={quote(key)}&alt=sse")
    assert key in credentials([], f"http://h/x?%6Bey={key}")  # the name percent-encoded
    assert "Bearer" not in credentials([("authorization", f"Bearer {key}")], "http://h/")
    assert credentials([("authorization", "short")], "http://h/?key=abc") == set()
