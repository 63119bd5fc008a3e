"""The guard: before a tool runs, an edit or command that matches a rejected approach's watch (its `guard`, a path
glob or command pattern, and its `contains`, a text in what is written or run) gets the configured decision.

The watches are read from the state's records, not from the rendered lines of 10_invariants.md: each `reject`
record carries its `guard` and `contains`, and where a line was edited by hand, the recorded watch wins. The cost
follows what is shown, not what is stored: only the rejected approaches that 10_invariants.md shows with a watch
are looked up, by their ids, in the last LOOKBACK bytes of the logs, read at once, and only the lines that name one
are decoded (a `rotate` record, the first of its log, carries the lines recorded before it). A line that no record
within that reach carries (added by hand and not yet recorded, recorded further back, or in a log that cannot be
read) watches what it shows: the guard fails closed, never open.
"""

from __future__ import annotations

import fnmatch
import json
import os

from rehydrate.errors import RehydrateError
from rehydrate.harness.hook import Answer, config
from rehydrate.store import layout
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

ENTRY_BYTES = 1200  # a quoted rejected approach in a guard's answer, where the harness counts bytes (5 of them)
MAX_INVARIANTS = 1 << 30  # 10_invariants.md is scanned up to this size (store/binding's bound); past it: fail closed
SCAN_CHUNK = 1 << 20  # bytes of 10_invariants.md read at a time
MAX_LINE = 1 << 20  # a longer rejected line is not one rehydrate wrote (its fields are capped): fail closed
LOOKBACK = 4 << 20  # the most bytes of the logs one guard call reads, looking for records (on every tool call)
GUARD_DECISIONS = ("ask", "deny", "warn")
PATCH_HEADERS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")  # Codex's apply_patch
Watch = tuple["str | None", "str | None", str]  # (guard, contains, the rejected approach's line)


# ------------------------------------------------------------------------------------------------ the watches


class Blind(Exception):
    """The rejected approaches cannot be read (10_invariants.md absent, not a regular file, unreadable, or holding a
    rejected line too long to be one rehydrate wrote): the guard cannot tell what is rejected, so it fails closed."""


def rejected(root: str) -> list[Watch]:
    """(path or command pattern, text to look for in what is written, the line) for each rejected approach that
    10_invariants.md shows with a watch, read from its record; in the order the file shows them. Blind when the
    file cannot be read."""
    shown = _shown(os.path.join(root, layout.INVARIANTS))
    if not shown:
        return []
    found = _recorded(os.path.join(root, layout.WAL_DIR), set(shown))
    out = []
    for ident, line in shown.items():
        # no record within reach: what the line shows still watches (fail closed)
        guard, contains, recorded = found.get(ident) or (*layout.entry_guard(line), line)
        if guard or contains:
            out.append((guard, contains, recorded))
    return out


def _shown(path: str) -> dict[str, str]:
    """Each rejected approach's line that shows a watch, by id (the first line naming an id wins), found by a scan
    of the file's bytes, chunk by chunk, for the watches' labels: the cost is one read of the file, whatever its size
    (up to MAX_INVARIANTS), and only the lines holding a label are decoded."""
    from rehydrate.fs import write as fsio
    from rehydrate.store import WORDS

    try:
        fd = fsio.open_read(path, WORDS)
    except RehydrateError as e:
        raise Blind(e.message) from None
    if fd is None:
        raise Blind(f"{layout.INVARIANTS} is missing")
    shown: dict[str, str] = {}
    try:
        carry = b""
        skipping = False  # inside a line too long to be an entry rehydrate wrote (not a rejected one): dropped
        offset = 0
        while True:
            chunk = os.read(fd, SCAN_CHUNK)
            if not chunk:
                break
            offset += len(chunk)
            if offset > MAX_INVARIANTS:
                raise Blind(f"{layout.INVARIANTS} is more than {MAX_INVARIANTS:,} bytes")
            if skipping:
                cut = chunk.find(b"\n")
                if cut < 0:
                    continue
                chunk, skipping = chunk[cut + 1 :], False
            buf = carry + chunk if carry else chunk
            end = buf.rfind(b"\n") + 1
            _labelled(buf, end, shown)
            carry = buf[end:]
            if len(carry) > MAX_LINE:
                if carry.startswith(b"- R-"):
                    raise Blind(f"{layout.INVARIANTS} holds a rejected line longer than {MAX_LINE:,} bytes")
                carry, skipping = b"", True
    except OSError as e:
        raise Blind(f"{layout.INVARIANTS} cannot be read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if carry and not skipping:
        _labelled(carry, len(carry), shown)
    return shown


def _labelled(buf: bytes, end: int, shown: dict[str, str]) -> None:
    """The rejected approaches' lines in buf[:end] (buf starts a line, end a line's end or the end of the file) that
    hold a watch's label, by id: bytes.find for the labels, so that a view of decisions is never decoded."""
    lines: dict[int, bytes] = {}  # by the line's offset: the file's order, whichever label was found first
    for label in (layout.GUARD_LABEL.encode(), layout.CONTAINS_LABEL.encode()):
        at = buf.find(label, 0, end)
        while at >= 0:
            start = buf.rfind(b"\n", 0, at) + 1
            stop = buf.find(b"\n", at, end)
            stop = end if stop < 0 else stop
            if buf.startswith(b"- R-", start):
                lines[start] = buf[start:stop]
            at = buf.find(label, stop, end)
    for start in sorted(lines):
        line = lines[start].decode("utf-8", "replace")
        ident = layout.entry_id(line)
        if ident is not None:
            shown.setdefault(ident, line)


def _recorded(wal_dir: str, wanted: set[str]) -> dict[str, Watch]:
    """The watches of the rejected approaches named in wanted, from their records in the actors' logs, as far as
    LOOKBACK bytes of them reach."""
    found: dict[str, Watch] = {}
    try:
        logs = sorted(n for n in os.listdir(wal_dir) if n.endswith(".jsonl"))
    except OSError:
        logs = []
    room = LOOKBACK
    for name in logs:
        if not wanted - set(found) or room <= 0:
            break
        room -= _read_log(os.path.join(wal_dir, name), wanted, found, room)
    return found


def _read_log(path: str, wanted: set[str], found: dict[str, Watch], room: int) -> int:
    """Read the last `room` bytes of one log, in one read, and decode (strictly) only its lines that name a wanted
    id, newest first, until each is found; the bytes read. A log that cannot be read, a line that does not decode
    (torn, damaged, a conflict marker's) or a record cut off by the reach gives nothing."""
    from rehydrate.fs import write as fsio
    from rehydrate.store import WORDS
    from rehydrate.store.wal import record as wal

    try:
        fd = fsio.open_read(path, WORDS)
    except RehydrateError:
        return 0
    if fd is None:
        return 0
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - room)
        data = os.pread(fd, size - start, start)
    except OSError:
        return 0
    finally:
        os.close(fd)
    lines = data.split(b"\n")[1 if start else 0 :]  # the first line read is cut unless the log starts there
    keys = [ident.encode() for ident in wanted]
    for line in reversed(lines):
        if not any(key in line for key in keys):
            continue
        try:
            _take(wal.decode(line), wanted, found)
        except wal.BadRecord:
            continue
        if not wanted - set(found):
            break
    return len(data)


def _take(rec: dict[str, Any], wanted: set[str], found: dict[str, Watch]) -> None:
    """The watches a record carries: a reject's own fields; the lines of a rotate or an adoption, as recorded."""
    data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
    assert isinstance(data, dict)
    op = rec.get("op")
    if op == "reject" and data.get("id") in wanted and data["id"] not in found and isinstance(data.get("line"), str):
        guard, contains = data.get("guard"), data.get("contains")
        found[data["id"]] = (
            guard if isinstance(guard, str) and guard else None,
            contains if isinstance(contains, str) and contains else None,
            data["line"],
        )
        return
    lines: list[object] = []
    if op == "rotate" and isinstance(data.get("lines"), list):
        lines = data["lines"] + (data["adopted"] if isinstance(data.get("adopted"), list) else [])
    elif op == "invariant" and data.get("adopted") and isinstance(data.get("line"), str):
        lines = [data["line"]]
    for line in lines:
        ident = layout.entry_id(line) if isinstance(line, str) else None
        if ident in wanted and ident not in found:
            assert isinstance(line, str) and ident is not None
            found[ident] = (*layout.entry_guard(line), line)  # a line as it was recorded, with its watch on it


# ------------------------------------------------------------------------------------------------ matching


def hit(
    guard: str | None, contains: str | None, path: str | None, rel_path: str | None, command: str | None, written: str
) -> bool:
    """A rejected approach's watch matches a tool call: its guard (if any) matches the path or command, and its
    `contains` (if any) is in what the call writes or runs. A plain substring, never a pattern: 10_invariants.md
    arrives by git pull, and a planted regular expression could make the hook run for ever."""
    if guard is None and contains is None:
        return False
    if guard is not None and not matches(guard, path, rel_path, command):
        return False
    return contains is None or contains in written


def matches(guard: str, path: str | None, rel_path: str | None, command: str | None) -> bool:
    """A guard is a path glob or a command pattern: it matches a target path, a command, or a word of it."""
    for target in (path, rel_path):
        if target and (fnmatch.fnmatchcase(target, guard) or fnmatch.fnmatchcase(os.path.basename(target), guard)):
            return True
    if command:
        if guard in command or fnmatch.fnmatchcase(command, guard):
            return True
        return any(fnmatch.fnmatchcase(word.strip("'\""), guard) for word in command.split())
    return False


def targets(harness: ModuleType, tool: object, tool_input: dict[str, Any]) -> tuple[list[str], str | None]:
    """The paths a tool call edits and the command it runs, from the harness's tool input."""
    if tool in harness.PATCH_TOOLS:
        command = tool_input.get("command")
        if not isinstance(command, str):
            return [], None
        return [ln[len(h) :].strip() for ln in command.split("\n") for h in PATCH_HEADERS if ln.startswith(h)], None
    if tool in harness.EDIT_TOOLS:
        target = tool_input.get("file_path") or tool_input.get("notebook_path")
        return ([target] if isinstance(target, str) else []), None
    command = tool_input.get("command")
    if tool in harness.SHELL_TOOLS and isinstance(command, str):
        return [], command
    return [], None


def written(harness: ModuleType, tool: object, tool_input: dict[str, Any]) -> str:
    """What a tool call writes or runs, for a rejected approach's `contains`: a file's new content, the replacement
    text of an edit, the lines a patch adds, a shell command."""
    parts: list[object] = []
    if tool in harness.PATCH_TOOLS:
        command = tool_input.get("command")
        if isinstance(command, str):
            parts = [ln[1:] for ln in command.split("\n") if ln.startswith("+") and not ln.startswith("+++")]
    elif tool in harness.EDIT_TOOLS:
        parts = [tool_input.get(k) for k in ("content", "new_string", "new_source")]
        edits = tool_input.get("edits")
        if isinstance(edits, list):
            parts += [e.get("new_string") for e in edits if isinstance(e, dict)]
    elif tool in harness.SHELL_TOOLS:
        parts = [tool_input.get("command")]
    return "\n".join(p for p in parts if isinstance(p, str))


def _established(harness: ModuleType, tool: object, tool_input: dict[str, Any]) -> bool:
    """Whether a salvaged tool call's target is known: the tool, and the path or command the guard checks for it."""
    if not isinstance(tool, str):
        return False
    if tool in harness.PATCH_TOOLS or tool in harness.SHELL_TOOLS:
        return "command" in tool_input
    if tool in harness.EDIT_TOOLS:
        return "file_path" in tool_input or "notebook_path" in tool_input
    return True  # a tool the guard does not watch


# ------------------------------------------------------------------------------------------------ the answer


def guard(harness: ModuleType, event: dict[str, Any], whole: bool = True) -> Answer:
    """Before a tool runs: an edit or command that matches a rejected approach's watch gets the configured decision.

    A call salvaged from an unreadable input (whole=False) whose target cannot be established gets the configured
    decision too, when any rejected approach has a watch: it fails closed, never open.
    """
    from rehydrate.store.locate import locate

    tool = event.get("tool_name")
    tool_input = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
    assert isinstance(tool_input, dict)
    known = whole or _established(harness, tool, tool_input)
    paths, command = targets(harness, tool, tool_input)
    if whole and not paths and command is None:
        return Answer()
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    root = locate(None, cwd if cwd and os.path.isdir(cwd) else None)
    from rehydrate.harness import effect

    try:
        watches = effect.watched(root)  # the check by effect's snapshot: taken now if it was not
    except Blind as e:  # what is rejected cannot be known: every call that writes or runs gets the decision
        if known and not paths and command is None:
            return Answer()
        return _answer(harness, event, root, _blind(root, tool, str(e)))
    if not whole and any(contains for _, contains, _ in watches):
        known = False  # what the call writes was not read whole: a `contains` cannot be ruled out
    if known and not paths and command is None:
        return Answer()
    project = os.path.dirname(root)
    hits, what = _hits(harness, tool, tool_input, paths, command, watches, (cwd or project, project))
    if not hits and (known or not watches):
        return Answer()
    reason = _reason(harness, tool, what, _where(root), hits, watches)
    return _answer(harness, event, root, reason)


def _answer(harness: ModuleType, event: dict[str, Any], root: str, reason: str) -> Answer:
    """The configured decision (`guard` in state/config.json: ask when unset or not one of GUARD_DECISIONS)."""
    decision = config(root).get("guard", "ask")
    if decision not in GUARD_DECISIONS:
        decision = "ask"
    return Answer(stdout=json.dumps(harness.decision(str(event.get("hook_event_name")), decision, reason)))


def _where(root: str) -> str:
    return f"{os.path.basename(root)}/{layout.INVARIANTS}"


def _blind(root: str, tool: object, why: str) -> str:
    call = f"this {clean(tool, one_line=True)[:80]} call" if isinstance(tool, str) else "this tool call"
    return (
        f"rehydrate: the guard cannot read the rejected approaches in {_where(root)} "
        f"({clean(why, one_line=True)[:300]}), so it cannot tell whether {call} retries one. "
        "Go ahead only if you know it does not; `rehydrate verify` names what is wrong with the state."
    )


def _hits(
    harness: ModuleType,
    tool: object,
    tool_input: dict[str, Any],
    paths: list[str],
    command: str | None,
    watches: list[Watch],
    where: tuple[str, str],
) -> tuple[list[str], str]:
    """The lines of the rejected approaches the call matches, and how the call is named in the answer.

    A shell command's targets are read by a shell's rules (shellwrites), each path then matched as written and with
    its symbolic links resolved, from the project as named and as resolved. Its `contains` is looked for in the
    command and in the files it copies into a target (a `cp notes.txt calc/eval.py` writes what notes.txt holds)."""
    text = written(harness, tool, tool_input)
    hits: list[str] = []
    what = f"the command {command!r}"[:300]
    base, project = where  # a relative path is the cwd's; a guard's glob is the project's
    places: list[tuple[str, bool]] = [(p, False) for p in paths]  # (a path, whether it is a folder written whole)
    if command is not None and any(g is not None for g, _, _ in watches):
        from rehydrate.harness import shellwrites

        found = shellwrites.writes(command, base)
        places += [(p, False) for p in found.paths + found.mentions] + [(p, True) for p in found.trees]
        text += _copied(found.sources)
    roots = list(dict.fromkeys((project, os.path.realpath(project))))
    for path, tree in places or [("", False)]:
        for absolute, rel in _resolved(path, base, roots) if path else [(None, None)]:
            found_lines = [
                ln
                for g, c, ln in watches
                if ln not in hits and (hit(g, c, absolute, rel, command, text) or (tree and _inside(g, c, rel)))
            ]
            if found_lines and rel:
                what = f"{tool} on {rel}"
            hits += found_lines
    return hits, what


def _resolved(path: str, base: str, roots: list[str]) -> list[tuple[str, str]]:
    """A target as written and with its symbolic links resolved (a link in the working folder or in the path), each
    with its path from the project (as named, and as resolved): a guard's glob is matched against each."""
    absolute = os.path.normpath(os.path.join(base, path))
    out = [(absolute, os.path.relpath(absolute, roots[0]))]
    for place in dict.fromkeys((absolute, os.path.realpath(absolute))):
        for root in roots:
            rel = os.path.relpath(place, root)
            if not rel.startswith(".."):
                out.append((place, rel))
    return list(dict.fromkeys(out))


def _inside(guard: str | None, contains: str | None, rel: str | None) -> bool:
    """A folder removed or moved whole (`rm -r calc`) writes what a path guard names inside it."""
    if guard is None or contains is not None or not rel or rel.startswith(".."):
        return False
    folder = "" if rel == "." else rel.rstrip("/") + "/"
    return guard.startswith(folder) or fnmatch.fnmatchcase(folder + os.path.basename(guard), guard)


COPIED_BYTES = 1 << 20  # the most bytes of the files a command copies that are read for a `contains`


def _copied(sources: list[str]) -> str:
    """What the regular files a command copies hold (their first COPIED_BYTES in all), for a `contains`."""
    import stat

    parts: list[str] = []
    room = COPIED_BYTES
    for path in sources[:64]:
        if room <= 0:
            break
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                data = os.read(fd, room)
                room -= len(data)
                parts.append(data.decode("utf-8", "replace"))
        except OSError:
            pass
        finally:
            os.close(fd)
    return "\n" + "\n".join(parts) if parts else ""


def _reason(harness: ModuleType, tool: object, what: str, where: str, hits: list[str], watches: list[Watch]) -> str:
    if hits:
        quoted = "\n".join(_entry(harness, h) for h in hits[:5])
        return (
            f"rehydrate: {what} matches an approach rejected in {where}:\n{quoted}\n"
            "A rejected approach stays rejected: do not retry it unless the human says the reason no longer holds."
        )
    quoted = "\n".join(_entry(harness, line) for _, _, line in watches[:5])
    more = f"\n(and {len(watches) - 5} more)" if len(watches) > 5 else ""
    call = f"this {clean(tool, one_line=True)[:80]} call" if isinstance(tool, str) else "this tool call"
    return (
        f"rehydrate: the hook's input could not be read whole (it is too large or malformed), so the guard "
        f"cannot tell what {call} changes. {where} guards these rejected approaches:\n{quoted}{more}\n"
        "Go ahead only if the call touches none of them."
    )


def _entry(harness: ModuleType, line: str) -> str:
    """A rejected approach quoted in a guard's answer: one clean line of at most 600 characters and, where the harness
    counts bytes, at most ENTRY_BYTES of them (five of them and the rest stay within its cap)."""
    text = clean(line, one_line=True)[:600]
    data = text.encode("utf-8", "surrogatepass")
    if harness.BRIEF_BYTES is None or len(data) <= ENTRY_BYTES:
        return text
    return data[: ENTRY_BYTES - 3].decode("utf-8", "ignore") + "…"
