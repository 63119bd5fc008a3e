"""One module per agent harness: how it calls `rehydrate hook` and what it expects back."""

from __future__ import annotations

NAMES = ("claude", "codex", "gemini")
