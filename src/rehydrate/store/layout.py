"""The state folder's layout: its file and folder names, the limits on what a record may carry, the names an actor
may take, and the line format of 10_invariants.md. The one place these facts live; how each view is rendered from
the WAL and checked against it is views.py's. Standard library only, no import at all: the hook path reads it.
"""

from __future__ import annotations

GOAL = "00_goal.md"
KEYS_DIR = "keys"  # committed public keys, one per actor (store/keys/)
KEY_PINS = "keys.json"  # this clone's pins of them, in its own git folder (State.local), never committed
INVARIANTS = "10_invariants.md"
HANDOFF = "20_handoff.md"
TASKS = "30_tasks.md"  # the harness's task list as its hooks last saw it (store/tasks.py)
TASKS_DIR = "tasks"  # an actor that joined: tasks/<actor>.md
NEXT_DIR = "next"  # an actor that joined: next/<actor>.md (store/actors.py)
HANDOFF_DIR = "handoff"  # and handoff/<actor>.md
NEXT = "99_next.md"
WAL_DIR = "wal"
ARCHIVE_DIR = "archive"
MAIL_DIR = "mail"  # the actors' messages (store/mail/), a folder per recipient
PIPELINES = "pipelines.json"  # the registered pipelines: {name: {"output", "progress", "key", "total"}}
GITIGNORE = ".gitignore"
VIEWS = (GOAL, INVARIANTS, HANDOFF, TASKS, NEXT)
# rehydrate's own set-up in a project, relative to it (the state folder's parent): the hooks, boot rules and MCP
# entries `install` and `init --rules` write. A change to these is not work since a checkpoint (checks/livestate.py);
# tests/store/test_layout.py holds the list to what each harness's install writes.
SETUP_FILES = frozenset(
    (
        *(".claude/settings.json", "CLAUDE.md", ".mcp.json"),
        *(".codex/hooks.json", ".codex/config.toml", "AGENTS.md"),
        *(".gemini/settings.json", "GEMINI.md", ".qwen/settings.json", "QWEN.md"),
        *(".cursor/hooks.json", ".cursor/rules/rehydrate.mdc"),
        *(".github/hooks/rehydrate.json", ".github/copilot-instructions.md"),
    )
)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def is_extra_view(name: str) -> bool:
    """Another view of the state folder: `NN_name.md` (two digits, `_`, then letters, digits, `.`, `_` or `-`).
    (Plain string tests, not a regular expression: compiling one costs the hook path's start-up.)"""
    return (
        len(name) > 6
        and name[:2].isascii()
        and name[:2].isdigit()
        and name[2] == "_"
        and name.endswith(".md")
        and set(name[3:-3]) <= _NAME_CHARS
    )


def is_actor(name: str) -> bool:
    """An actor's name, the name of its log in wal/: 1 to 64 letters, digits, `.`, `_` or `-`, the first a letter or
    a digit."""
    return 0 < len(name) <= 64 and name[0].isascii() and name[0].isalnum() and set(name) <= _NAME_CHARS


GITATTRIBUTES = ".gitattributes"
GITATTRIBUTES_TEXT = (
    "# written by rehydrate: logs and the append-only views merge line by line, keeping both sides' lines (the\n"
    "# next command reconciles them), so that branches merge with no conflict in state/; and every state file is\n"
    "# hash-bound byte for byte, so git must not convert line endings\n"
    "wal/*.jsonl merge=union\n"
    "10_invariants.md merge=union\n"
    "20_handoff.md merge=union\n"
    "99_next.md merge=union\n"
    "next/*.md merge=union\n"
    "handoff/*.md merge=union\n"
    "* -text\n"
)
# the text of states made before union merges: upgraded by the next write
GITATTRIBUTES_V1 = (
    "# written by rehydrate: state files are hash-bound byte for byte; git must not convert them\n* -text\n"
)

INVARIANTS_HEADER = (
    "# Decisions and rejected approaches\n"
    "\n"
    "Append-only, one line per entry, written by `rehydrate invariant`, `reject` and `withdraw`.\n"
    "An entry holds until a later line supersedes or withdraws it. Edit nothing: each line is bound by state/wal/.\n"
    "\n"
)
# the header's text in states made before supersede and withdraw (bound by their init record: never rewritten)
INVARIANTS_HEADER_V1 = (
    "# Decisions and rejected approaches\n"
    "\n"
    "Append-only, one line per entry, written by `rehydrate invariant` and `rehydrate reject`.\n"
    "A rejected approach stays rejected. Edit nothing above the last line: each line is bound by state/wal/.\n"
    "\n"
)
GITIGNORE_TEXT = (
    "# written by rehydrate: the lock, temporary files, cut torn lines, kept hand edits and caches are not state\n"
    ".lock\n*.tmp\n*.broken\n*.broken.*\n*.edited\n*.edited.*\n*.seen\n.local/\n"
)
# What rehydrate writes in the state folder and shares through git: these top-level files, the extra views
# (is_extra_view) and everything under these folders, less what GITIGNORE_TEXT keeps out (sync/run.py commits
# them whatever other ignore rules say). NEXT_DIR and HANDOFF_DIR hold store/actors.py's views, one per actor.
OWN_FILES = frozenset((*VIEWS, GITIGNORE, GITATTRIBUTES, PIPELINES))
OWN_DIRS = frozenset((WAL_DIR, ARCHIVE_DIR, KEYS_DIR, MAIL_DIR, TASKS_DIR, NEXT_DIR, HANDOFF_DIR))


def is_own(name: str) -> bool:
    """A top-level entry of the state folder that rehydrate writes and shares (OWN_FILES, OWN_DIRS, extra views)."""
    return name in OWN_FILES or name in OWN_DIRS or is_extra_view(name)


# Limits on what a user can put in one record, so that every record stays far below wal.MAX_LINE.
MAX_FIELD = 16 * 1024
MAX_GOAL = 64 * 1024
MAX_HANDOFF = 1024 * 1024

# the word for the command that writes each replaceable view next (store/records.py: the ops that write it)
WRITERS = {NEXT: "checkpoint", HANDOFF: "handoff", TASKS: "change of the harness's task list"}
MAX_VIEW = 4 << 20  # a view file larger than this is not read into a brief
MAX_EDITED = 64 << 20  # a replaceable view (a hand edit: the WAL writes far less) is compared and kept up to this


_ID = r"^- ([DRW]-[0-9a-f]{6}) "  # a decision, a rejected approach, a withdrawal


# The labels that end a rejected approach's line: the hooks read its guard back from the line, so no field before
# them may hold one (State refuses such text rather than make the line ambiguous).
GUARD_LABEL = " guard: "
CONTAINS_LABEL = " contains: "


def entry_line(
    kind: str,
    ident: str,
    day: str,
    text: str,
    because: str,
    guard: str | None,
    contains: str | None = None,
    supersedes: str | None = None,
) -> str:
    """An entry's line: a decision (kind D) or a rejected approach (R), which may supersede an earlier entry (its id
    in a fixed place, before the text: no text can fake or hide it), or a withdrawal (W), whose text is the id of
    the entry it withdraws."""
    if kind == "W":
        return f"- {ident} {day} {WITHDRAWN}{text} because: {because}"
    word = "decision" if kind == "D" else "rejected"
    line = f"- {ident} {day} {word}{SUPERSEDING}{supersedes}: " if supersedes else f"- {ident} {day} {word}: "
    line += f"{text} because: {because}"
    if guard:
        line += f"{GUARD_LABEL}{guard}"
    if contains:
        line += f"{CONTAINS_LABEL}{contains}"
    return line


# A line that takes an earlier entry out of force: `- D-xxxxxx YYYY-MM-DD decision, superseding R-yyyyyy: TEXT
# because: WHY` (a rejected approach likewise) or `- W-xxxxxx YYYY-MM-DD withdrawn: R-yyyyyy because: WHY`. The id it
# names stands at a fixed offset, read with str methods (no re on the hook path): LIFT_AT for a superseding entry,
# WITHDRAWN_AT for a withdrawal. The file stays append-only: what is in force is every entry less those named so.
SUPERSEDING = ", superseding "
WITHDRAWN = "withdrawn: "
LIFT_AT = 44  # "- D-xxxxxx YYYY-MM-DD decision" is 30 characters, SUPERSEDING 14
WITHDRAWN_AT = 33  # "- W-xxxxxx YYYY-MM-DD " is 22 characters, WITHDRAWN 11


def entry_lifts(line: str) -> str | None:
    """The id of the entry a line takes out of force (a withdrawal's, or the one a new entry supersedes), None for
    any other line. Only an entry (D- or R-) can be taken out of force, and never by itself."""
    ident = entry_id(line)
    if ident is None or not _day(line[11:22]):
        return None
    if ident[0] == "W":
        at, before, after = WITHDRAWN_AT, line[22:WITHDRAWN_AT] == WITHDRAWN, " "
    else:
        at, after = LIFT_AT, ": "
        before = line[22:30] in ("decision", "rejected") and line[30:LIFT_AT] == SUPERSEDING
    target = line[at : at + 8]
    if not before or line[at + 8 : at + 8 + len(after)] != after or target[:2] not in ("D-", "R-"):
        return None
    return target if entry_id(f"- {target} ") == target and target != ident else None


def _day(text: str) -> bool:
    """`YYYY-MM-DD ` (str methods: no re on the hook path)."""
    digits = text[:4] + text[5:7] + text[8:10]
    return len(text) == 11 and text[4] + text[7] + text[10] == "-- " and digits.isascii() and digits.isdigit()


def entry_guard(line: str) -> tuple[str | None, str | None]:
    """(path or command pattern, text the written content must contain) of a rejected approach's line."""
    contains = guard = None
    if CONTAINS_LABEL in line:
        line, contains = line.rsplit(CONTAINS_LABEL, 1)
    if GUARD_LABEL in line:
        guard = line.rsplit(GUARD_LABEL, 1)[1]
    return (guard.strip() or None) if guard else None, (contains.strip() or None) if contains else None


def entry_id(line: str) -> str | None:
    ident = line[2:10]  # _ID with str methods: no re on the hook path
    if (
        line[:2] == "- "
        and line[10:11] == " "
        and ident[:2] in ("D-", "R-", "W-")
        and not ident[2:].strip("0123456789abcdef")
    ):
        return ident
    return None


def view_kind(name: str) -> str:
    """99_next.md for next/<actor>.md, 20_handoff.md for handoff/<actor>.md, 30_tasks.md for tasks/<actor>.md (an
    actor's own views)."""
    if name.startswith(NEXT_DIR + "/"):
        return NEXT
    if name.startswith(HANDOFF_DIR + "/"):
        return HANDOFF
    return TASKS if name.startswith(TASKS_DIR + "/") else name


def tasks_view(next_name: str) -> str:
    """The task-list view of the actor whose program counter is next_name: 30_tasks.md beside 99_next.md,
    tasks/<actor>.md beside next/<actor>.md."""
    return TASKS if next_name == NEXT else f"{TASKS_DIR}/{next_name.split('/', 1)[1]}"
