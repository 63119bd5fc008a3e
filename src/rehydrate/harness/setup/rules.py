"""The boot rule: a marked block in the agents' instruction files, installed idempotently."""

from __future__ import annotations

import os

from rehydrate.errors import UsageError
from rehydrate.harness.setup import files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.harness.setup.install import Target

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


def plan(project: str, state_rel: str, create: list[str]) -> list[tuple[str, str, files.Place, bytes | None]]:
    """What install would do: (file, "created" | "updated" | "unchanged", where it is, new bytes or None).

    Reads and checks every file first, so that a refusal comes before anything is written (call it before creating
    the state, and a refused link leaves no half-done init behind). A symlinked instruction file (CLAUDE.md pointing
    at AGENTS.md is common) is written through to its target, once, when the target is inside the project, out of
    .git and out of the state folder; a link that leads anywhere else is refused, naming the link and its target.
    """
    out: list[tuple[str, str, files.Place, bytes | None]] = []
    seen: set[str] = set()
    text_block = block(state_rel)
    for key, name in FILES.items():
        path = os.path.join(project, name)
        if not os.path.lexists(path) and key not in create:
            continue
        place = files.in_project(path, project, keep_out=(state_rel,))
        if place.real in seen:
            out.append((name, "unchanged", place, None))
            continue
        seen.add(place.real)
        old = files.read(place, MAX_RULES_FILE)
        old_text = old.decode("utf-8", "surrogateescape") if old is not None else ""
        new_text = merge(old_text, text_block)
        if old is not None and new_text == old_text:
            out.append((name, "unchanged", place, None))
            continue
        out.append((name, "created" if old is None else "updated", place, new_text.encode("utf-8", "surrogateescape")))
    return out


def install(project: str, state_rel: str, create: list[str]) -> list[tuple[str, str]]:
    """Put the block into every instruction file that exists and those named in create; the file's mode is kept.

    Returns (file, "created" | "updated" | "unchanged") for each. Nothing is written unless every file passes.
    """
    planned = plan(project, state_rel, create)
    for _name, _status, place, new in planned:
        if new is not None:
            files.write(place, new, "rules.replace")
    return [(name, status) for name, status, _place, _new in planned]


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


def merge_block(old: bytes | None, block: str, *, remove: bool) -> bytes | None:
    """An instructions file with the boot rule's marked block in (updated in place) or out (None: the file held
    nothing but the block, so it was ours)."""
    text = (old or b"").decode("utf-8", "surrogateescape")
    if not remove:
        return merge(text, block).encode("utf-8", "surrogateescape")
    start = text.find(BEGIN_PREFIX)
    end = text.find(END, start + 1) if start >= 0 else -1
    if start < 0 or end < 0:
        return old
    after = end + len(END)
    after += 1 if text[after : after + 1] == "\n" else 0
    before = text[:start]
    if before.endswith("\n\n"):
        before = before[:-1]
    rest = before + text[after:]
    if not rest.strip() and old is not None:
        return None
    return rest.encode("utf-8", "surrogateescape")


def target(path: str, state_rel: str) -> Target:
    """install's target for an instructions file: the boot rule's block merged in (or taken out)."""
    text = block(state_rel)
    return (path, lambda old, rm: merge_block(old, text, remove=rm), "boot rule")
