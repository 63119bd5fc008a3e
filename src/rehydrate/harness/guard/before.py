"""The guard before a tool runs: an edit or command that matches a rejected approach's watch (watches.py) gets the
configured decision (`guard` in state/config.json: ask, deny or warn); a call whose target cannot be established,
or a state whose rejected approaches cannot be read, gets it too: the guard fails closed, never open."""

from __future__ import annotations

import os
import stat

from rehydrate import safejson
from rehydrate.harness.base import Answer
from rehydrate.harness.guard import snapshot
from rehydrate.harness.guard.match import Blind, Glob, Watch, hit
from rehydrate.store import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.harness.base import Harness, Located

ENTRY_BYTES = 1200  # a quoted rejected approach in a guard's answer, where the harness counts bytes (5 of them)
GUARD_DECISIONS = ("ask", "deny", "warn")
PATCH_HEADERS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")  # Codex's apply_patch


def targets(harness: Harness, tool: object, tool_input: dict[str, Any]) -> tuple[list[str], str | None]:
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


def written(harness: Harness, tool: object, tool_input: dict[str, Any]) -> str:
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


def _established(harness: Harness, tool: object, tool_input: dict[str, Any]) -> bool:
    """Whether a salvaged tool call's target is known: the tool, and the path or command the guard checks for it."""
    if not isinstance(tool, str):
        return False
    if tool in harness.PATCH_TOOLS or tool in harness.SHELL_TOOLS:
        return "command" in tool_input
    if tool in harness.EDIT_TOOLS:
        return "file_path" in tool_input or "notebook_path" in tool_input
    return True  # a tool the guard does not watch


# ------------------------------------------------------------------------------------------------ the answer


def guard(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    """Before a tool runs: an edit or command that matches a rejected approach's watch gets the configured decision.

    A call salvaged from an unreadable input (whole=False) whose target cannot be established gets the configured
    decision too, when any rejected approach has a watch: it fails closed, never open.
    """
    tool = event.get("tool_name")
    tool_input = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
    assert isinstance(tool_input, dict)
    known = whole or _established(harness, tool, tool_input)
    paths, command = targets(harness, tool, tool_input)
    if whole and not paths and command is None:
        return Answer()
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    root = here.root
    try:
        watches = _watched(here)
    except Blind as e:  # what is rejected cannot be known: every call that writes or runs gets the decision
        if known and not paths and command is None:
            return Answer()
        return _answer(harness, event, here, _blind(root, tool, str(e)))
    if not whole and any(contains for _, contains, _ in watches):
        known = False  # what the call writes was not read whole: a `contains` cannot be ruled out
    if known and not paths and command is None:
        return Answer()
    project = os.path.dirname(root)
    hits, what = _hits(harness, tool, tool_input, paths, command, watches, (cwd or project, project))
    if not hits and (known or not watches):
        return Answer()
    reason = _reason(harness, tool, what, _where(root), hits, watches)
    return _answer(harness, event, here, reason)


def _watched(here: Located) -> list[Watch]:
    """The check by effect's watches: the snapshot's while every guarded file is as it was (snapshot.quiet), else
    from the whole check (effect.watched: the snapshot taken, or rebuilt, now)."""
    found = snapshot.quiet(here.root)
    if found is not None:
        return found
    from rehydrate.harness.guard import effect  # the whole check: loaded when the snapshot has something to do

    return effect.watched(here)


def _answer(harness: Harness, event: dict[str, Any], here: Located, reason: str) -> Answer:
    """The configured decision (`guard` in state/config.json: ask when unset or not one of GUARD_DECISIONS)."""
    decision = here.config.get("guard", "ask")
    if decision not in GUARD_DECISIONS:
        decision = "ask"
    return Answer(stdout=safejson.dumps(harness.decision(str(event.get("hook_event_name")), decision, reason)))


def _where(root: str) -> str:
    return f"{os.path.basename(root)}/{layout.INVARIANTS}"


def _clean(text: str, one_line: bool = False) -> str:
    """text.clean, loaded by an answer: a call the guard lets through never loads it."""
    from rehydrate.text import clean as cleaned

    return cleaned(text, one_line=one_line)


def _blind(root: str, tool: object, why: str) -> str:
    call = f"this {_clean(tool, one_line=True)[:80]} call" if isinstance(tool, str) else "this tool call"
    return (
        f"rehydrate: the guard cannot read the rejected approaches in {_where(root)} "
        f"({_clean(why, one_line=True)[:300]}), so it cannot tell whether {call} retries one. "
        "Go ahead only if you know it does not; `rehydrate verify` names what is wrong with the state."
    )


def _hits(
    harness: Harness,
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
        from rehydrate.harness.guard import shellwrites  # shlex and the shell's rules: only for a command

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
    return guard.startswith(folder) or Glob(guard).match(folder + os.path.basename(guard))


COPIED_BYTES = 1 << 20  # the most bytes of the files a command copies that are read for a `contains`


def _copied(sources: list[str]) -> str:
    """What the regular files a command copies hold (their first COPIED_BYTES in all), for a `contains`."""
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


def _reason(harness: Harness, tool: object, what: str, where: str, hits: list[str], watches: list[Watch]) -> str:
    if hits:
        quoted = "\n".join(_entry(harness, h) for h in hits[:5])
        ident = (layout.entry_id(hits[0]) if len(hits) == 1 else None) or "ID"
        return (
            f"rehydrate: {what} matches an approach rejected in {where}:\n{quoted}\n"
            "A rejected approach stays rejected: do not retry it unless the human says the reason no longer holds "
            f"(then record why first: `rehydrate invariant TEXT --because WHY --supersedes {ident}`)."
        )
    quoted = "\n".join(_entry(harness, line) for _, _, line in watches[:5])
    more = f"\n(and {len(watches) - 5} more)" if len(watches) > 5 else ""
    call = f"this {_clean(tool, one_line=True)[:80]} call" if isinstance(tool, str) else "this tool call"
    return (
        f"rehydrate: the hook's input could not be read whole (it is too large or malformed), so the guard "
        f"cannot tell what {call} changes. {where} guards these rejected approaches:\n{quoted}{more}\n"
        "Go ahead only if the call touches none of them."
    )


def _entry(harness: Harness, line: str) -> str:
    """A rejected approach quoted in a guard's answer: one clean line of at most 600 characters and, where the harness
    counts bytes, at most ENTRY_BYTES of them (five of them and the rest stay within its cap)."""
    text = _clean(line, one_line=True)[:600]
    data = text.encode("utf-8", "surrogatepass")
    if harness.BRIEF_BYTES is None or len(data) <= ENTRY_BYTES:
        return text
    return data[: ENTRY_BYTES - 3].decode("utf-8", "ignore") + "…"
