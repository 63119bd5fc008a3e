"""Claude Code: its home folder (more to come: events, answer shapes, install targets)."""

from __future__ import annotations

import os


def home() -> str:
    """Claude Code's user folder: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
