"""OpenAI Responses API."""

from .stream import ResponsesReassembler

__all__ = ["ResponsesReassembler"]
