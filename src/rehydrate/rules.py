"""The boot rule: a marked block in the agents' instruction files, installed idempotently."""

from __future__ import annotations

import os

from rehydrate import fsio
from rehydrate.errors import RehydrateError, UsageError

BEGIN_PREFIX = "<!-- rehydrate:begin"
BEGIN = BEGIN_PREFIX + " (managed by rehydrate; edits inside this block are replaced) -->"
END = "<!-- rehydrate:end -->"
FILES = {"agents": "AGENTS.md", "claude": "CLAUDE.md", "gemini": "GEMINI.md"}
MAX_RULES_FILE = 4 << 20


def block(state_rel: str) -> str:
    s = state_rel.rstrip("/")
    return (
        f"{BEGIN}\n"
        "## Working state (rehydrate)\n"
        "\n"
        f"If `{s}/` exists, run `rehydrate resume` before any other action, and again after any context compaction\n"
        f"(without rehydrate installed, read the files in `{s}/` from 00 to 99, in lexical order, instead).\n"
        "Disk is the source of truth, not the conversation: where your memory and the state disagree,\n"
        "trust the state.\n"
        "\n"
        "- Record each decision: `rehydrate invariant 'TEXT' --because 'WHY'`.\n"
        "- Record each abandoned approach: `rehydrate reject 'APPROACH' --because 'WHY'`; never retry a rejected one.\n"
        "- After each step: `rehydrate checkpoint --done 'WHAT' --next 'NEXT ACTION'`.\n"
        "- Before stopping: `rehydrate handoff` with a note for the next session (text on stdin).\n"
        f"{END}\n"
    )


def parse_names(value: str) -> list[str]:
    names = [n.strip().lower() for n in value.split(",") if n.strip()]
    bad = [n for n in names if n not in FILES]
    if bad:
        raise UsageError(f"unknown rules file(s): {', '.join(bad)}", f"choose from {', '.join(FILES)}")
    return names


def install(project: str, state_rel: str, create: list[str]) -> list[tuple[str, str]]:
    """Put the block into every instruction file that exists and those named in create.

    Returns (file, "created" | "updated" | "unchanged") for each. Symlinked instruction files (CLAUDE.md pointing
    at AGENTS.md is common) are written through to their target, once.
    """
    results: list[tuple[str, str]] = []
    seen: set[str] = set()
    text_block = block(state_rel)
    for key, name in FILES.items():
        path = os.path.join(project, name)
        exists = os.path.lexists(path)
        if not exists and key not in create:
            continue
        target = os.path.realpath(path)
        if target in seen:
            results.append((name, "unchanged"))
            continue
        seen.add(target)
        if exists and not os.path.isfile(target):
            raise RehydrateError(f"{path} is not a regular file", "move it away, then run init again")
        old = fsio.read_bytes(target, MAX_RULES_FILE) if os.path.exists(target) else None
        old_text = old.decode("utf-8", "replace") if old is not None else ""
        new_text = merge(old_text, text_block)
        if old is not None and new_text == old_text:
            results.append((name, "unchanged"))
            continue
        fsio.replace(target, new_text.encode(), "rules.replace")
        results.append((name, "created" if old is None else "updated"))
    return results


def merge(text: str, text_block: str) -> str:
    """The file with the block replaced in place, or appended once; the rest untouched."""
    start = text.find(BEGIN_PREFIX)
    end = text.find(END, start + 1) if start >= 0 else -1
    if start >= 0 and end >= 0:
        after = end + len(END)
        if text[after : after + 1] == "\n":
            after += 1
        return text[:start] + text_block + text[after:]
    if not text:
        return text_block
    sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return text + sep + text_block
