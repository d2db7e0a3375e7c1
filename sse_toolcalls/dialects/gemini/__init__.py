"""Google Gemini (AI Studio and Vertex AI)."""

from .stream import GeminiReassembler

__all__ = ["GeminiReassembler"]
