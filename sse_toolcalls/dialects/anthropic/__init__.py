"""Anthropic Messages API."""

from .stream import AnthropicReassembler

__all__ = ["AnthropicReassembler"]
