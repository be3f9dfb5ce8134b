"""Stet LSP: an AI coding agent's working memory and provenance in the editor."""

__version__ = "0.1.0"
