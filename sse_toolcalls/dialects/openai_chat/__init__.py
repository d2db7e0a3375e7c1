"""OpenAI Chat Completions and OpenAI-compatible servers."""

from .stream import ChatReassembler

__all__ = ["ChatReassembler"]
