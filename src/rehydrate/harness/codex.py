"""Codex CLI: its home folder (more to come: events, answer shapes, install targets)."""

from __future__ import annotations

import os


def home() -> str:
    """Codex CLI's user folder: $CODEX_HOME, else ~/.codex."""
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
