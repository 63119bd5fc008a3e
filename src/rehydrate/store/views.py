"""The files on disk and how each view is rendered from WAL records: one place for each of these facts."""

from __future__ import annotations

import re
import unicodedata

GOAL = "00_goal.md"
INVARIANTS = "10_invariants.md"
HANDOFF = "20_handoff.md"
NEXT = "99_next.md"
WAL_DIR = "wal"
ARCHIVE_DIR = "archive"
GITIGNORE = ".gitignore"
VIEWS = (GOAL, INVARIANTS, HANDOFF, NEXT)
# Patterns are compiled on first use (re caches them): each compile costs the hook path ~70 us.
EXTRA_VIEW = r"^[0-9]{2}_[A-Za-z0-9._-]+\.md$"
ACTOR = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
OP = r"^[a-z][a-z0-9_-]{0,31}$"
GITATTRIBUTES = ".gitattributes"
GITATTRIBUTES_TEXT = (
    "# written by rehydrate: state files are hash-bound byte for byte; git must not convert them\n* -text\n"
)

INVARIANTS_HEADER = (
    "# Decisions and rejected approaches\n"
    "\n"
    "Append-only, one line per entry, written by `rehydrate invariant` and `rehydrate reject`.\n"
    "A rejected approach stays rejected. Edit nothing above the last line: each line is bound by state/wal/.\n"
    "\n"
)
GITIGNORE_TEXT = (
    "# written by rehydrate: the lock, temporary files, cut torn lines, kept hand edits and caches are not state\n"
    ".lock\n*.tmp\n*.broken\n*.broken.*\n*.edited\n*.edited.*\n*.seen\n"
)

# Limits on what a user can put in one record, so that every record stays far below wal.MAX_LINE.
MAX_FIELD = 16 * 1024
MAX_GOAL = 64 * 1024
MAX_HANDOFF = 1024 * 1024

_INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn"}
_ID = r"^- ([DR]-[0-9a-f]{6}) "


def clean(text: str, *, one_line: bool = False) -> str:
    """Text as stored: no control or invisible characters (tabs and, unless one_line, newlines kept)."""
    text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates from undecodable argv bytes
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if one_line:
        text = " ".join(text.split())
    out = []
    for ch in text:
        if ch in "\n\t" or unicodedata.category(ch) not in _INVISIBLE:
            out.append(ch)
    lines = [line.rstrip() for line in "".join(out).split("\n")]
    return "\n".join(lines).strip("\n")


def render_goal(goal: str, done_when: str | None) -> str:
    text = f"# Goal\n\n{goal}\n"
    if done_when:
        text += f"\n## Done when\n\n{done_when}\n"
    return text


# The labels that end a rejected approach's line: the hooks read its guard back from the line, so no field before
# them may hold one (State refuses such text rather than make the line ambiguous).
GUARD_LABEL = " guard: "
CONTAINS_LABEL = " contains: "


def entry_line(
    kind: str, ident: str, day: str, text: str, because: str, guard: str | None, contains: str | None = None
) -> str:
    word = "decision" if kind == "D" else "rejected"
    line = f"- {ident} {day} {word}: {text} because: {because}"
    if guard:
        line += f"{GUARD_LABEL}{guard}"
    if contains:
        line += f"{CONTAINS_LABEL}{contains}"
    return line


def entry_guard(line: str) -> tuple[str | None, str | None]:
    """(path or command pattern, text the written content must contain) of a rejected approach's line."""
    contains = guard = None
    if CONTAINS_LABEL in line:
        line, contains = line.rsplit(CONTAINS_LABEL, 1)
    if GUARD_LABEL in line:
        guard = line.rsplit(GUARD_LABEL, 1)[1]
    return (guard.strip() or None) if guard else None, (contains.strip() or None) if contains else None


def entry_id(line: str) -> str | None:
    m = re.match(_ID, line)
    return m.group(1) if m else None


def _field(label: str, value: str) -> str:
    first, *rest = value.split("\n")
    return "\n".join([f"{label}: {first}"] + ["  " + r for r in rest])


def render_next(seq: int | None, ts: str, head: str | None, goal: str, done: str, next_: str) -> str:
    where = f"HEAD {head[:7]}" if head else "no git HEAD"
    title = f"checkpoint {seq}" if seq is not None else "no checkpoint yet"
    return (
        f"# Next ({title}, {ts[:16]}Z, {where})\n"
        + _field("current goal", goal)
        + "\n"
        + _field("last completed", done)
        + "\n"
        + _field("next allowed action", next_)
        + "\n"
    )


_NEXT_FIELDS = {"current goal": "goal", "last completed": "done", "next allowed action": "next"}


def parse_next(text: str) -> dict[str, str]:
    """The fields of a rendered 99_next.md (the inverse of render_next)."""
    out: dict[str, list[str]] = {}
    key = None
    for line in text.split("\n")[1:]:
        if line.startswith("  ") and key:
            out[key].append(line[2:])
            continue
        label, sep, value = line.partition(": ")
        key = _NEXT_FIELDS.get(label) if sep else None
        if key:
            out[key] = [value]
    return {k: "\n".join(v) for k, v in out.items()}


def render_handoff(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
