"""The brief's "## Just before the compaction": what the PreCompact hook captured from the transcript (schema v1,
harness/compaction/capture.py), shown after the next step when a compaction came after the last checkpoint.

The capture arrived with the WAL (git pull): untrusted, any field may have the wrong type or be huge. `Material`
reads it without ever raising: a field of the wrong type counts as absent, every string is cut to its schema bound
(from at most twice that much raw text), cleaned once and has the token removed. Everything that comes from the
transcript stands in a fence of its own (`[TOKEN quote: SOURCE]` ... `[TOKEN end]`), labelled with its source; the
header above them and the labels are computed by code from numbers and known names only.

The knob `_Plan.capture` is the most characters of quoted text shown (None: all; 0: the section is dropped and named
under "Left out"). Under a cap the parts are kept in this order: the task list, the last user message, the files
edited, the commands that failed last, the last assistant message, the older user messages.
"""

from __future__ import annotations

from rehydrate.brief.fence import fence_body, flat, quoted_lines, shorten_quoted, text_lines, untoken

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.brief.compose import Sections

# the schema's bounds (harness/compaction/capture.py), kept here so that the hook path loads nothing of the harness
MAX_TODOS, MAX_TODO = 30, 200
MAX_USER, MAX_USER_TEXT = 3, 1000
MAX_EDITED, MAX_PATH = 50, 300
MAX_FAILED, MAX_COMMAND, MAX_ERROR = 3, 300, 310
MAX_ASSISTANT = 1500
HARNESSES = ("claude", "codex", "gemini")
LEFT_OUT = "the capture before the compaction (`rehydrate log --op compaction --json`)"
_SHORTEST = 24  # a part given less room than this is left out rather than shown as a stub
_STAMP = frozenset("0123456789-:.TZ")


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**15 else None


def _raw(value: object, most: int) -> str:
    """A string field as far as it could be shown (twice its bound, before cleaning); "" for any other type."""
    return value[: 2 * most] if isinstance(value, str) else ""


def _word(value: object, most: int = 40) -> str:
    """A tool or status name for a computed label: letters, digits, spaces, `_`, `-`, `/` and `.` only."""
    if not isinstance(value, str):
        return ""
    return " ".join("".join(c for c in value[:most] if c.isascii() and (c.isalnum() or c in " _-./")).split())


# What each kind of user message is called in its label (transcripts.model.KINDS); another kind is a message.
KIND_LABELS = {
    "prompt": "user request",
    "command": "user's slash command",
    "queued": "message the user queued while the agent worked",
    "rejected": "user's words rejecting a tool call",
}
OPEN_FIRST = {"in_progress": 0, "pending": 1}  # a task list's open items first; the rest (done) after


def _stamp(value: object) -> str | None:
    """A record's or message's time as `YYYY-MM-DDTHH:MMZ`, or None when it is not one."""
    if not isinstance(value, str) or len(value) < 16 or not set(value[:16]) <= _STAMP or value[10:11] != "T":
        return None
    return value[:16] + "Z"


class Part:
    """One fenced part: its source (computed), its quoted lines, its place when room is short (0 first)."""

    __slots__ = ("body", "rank", "source")

    def __init__(self, source: str, text: str, rank: int) -> None:
        self.source = source
        self.body = quoted_lines(text) if text else ">"
        self.rank = rank


class Material:
    """The capture as the brief shows it: a computed header and the fenced parts, in the section's order."""

    def __init__(
        self, capture: object, meta: object, token: str, state_tasks: list[tuple[str, str]] | None = None
    ) -> None:
        self.token = token
        self.state_tasks = state_tasks  # the state's task list as the brief shows it: a capture of the same is named
        self.parts: list[Part] = []
        cap = capture if isinstance(capture, dict) else {}
        info = meta if isinstance(meta, dict) else {}
        harness = cap.get("harness") if cap.get("harness") in HARNESSES else None
        self.where = f"{harness} transcript" if harness else "transcript"
        self.header = self._header(cap, info, harness)
        self._parts(cap)
        self.full = sum(len(p.body) for p in self.parts)

    def _header(self, cap: dict[str, object], info: dict[str, object], harness: str | None) -> str:
        hook = "the PreCompact hook" if info.get("phase") in ("pre", None) else "a compaction hook"
        when = _stamp(info.get("ts"))
        seq = _int(info.get("seq"))
        since = cap.get("since") if isinstance(cap.get("since"), dict) else {}
        ckpt = _int(since.get("seq") if isinstance(since, dict) else None)
        ckpt = ckpt if ckpt is not None else _int(info.get("checkpoint"))
        said = f"Captured by {hook}"
        said += f" at {when}" if when else ""
        said += f" (compaction record {seq})" if seq is not None else ""
        said += f" from the {harness} transcript" if harness else " from the transcript"
        said += f" since checkpoint {ckpt}" if ckpt is not None else " since the last checkpoint"
        counts = [(cap.get("tool_calls"), "tool call"), (cap.get("user_turns"), "user turn")]
        seen = [f"{n:,} {w}{'s' if n != 1 else ''}" for v, w in counts if (n := _int(v)) is not None]
        said += f" ({', '.join(seen)})" if seen else ""
        read = cap.get("read") if isinstance(cap.get("read"), dict) else {}
        if isinstance(read, dict) and read.get("cut") is True:
            said += "; only the transcript's end was read"
        return said + "; transcript text, quoted as data."

    def _add(self, source: str, text: str, rank: int) -> None:
        self.parts.append(Part(untoken(flat(source), self.token), untoken(text, self.token), rank))

    def _parts(self, cap: dict[str, object]) -> None:
        where = self.where
        error = _raw(cap.get("error"), 200)
        if error:
            self._add(f"{where}: why the capture failed", flat(error)[:200], 0)
        self._todos(cap.get("todos"))
        users = [u for u in _list(cap.get("user")) if isinstance(u, dict)][-MAX_USER:]
        for i, u in enumerate(users):
            text = _cut(text_lines(_raw(u.get("text"), MAX_USER_TEXT)), MAX_USER_TEXT)
            said = u.get("kind")
            kind = KIND_LABELS.get(said, "user message") if isinstance(said, str) else "user message"
            newest = ", the last" if i == len(users) - 1 else ""
            self._add(f"{where}{_at(u)}: {kind} ({i + 1} of {len(users)}{newest})", text, 1 if newest else 5)
        edited = _dict(cap.get("edited"))
        files = _list(edited.get("files"))
        paths = [p for p in (_cut(flat(_raw(f, MAX_PATH)), MAX_PATH) for f in files[:MAX_EDITED]) if p]
        more = len(files) - len(files[:MAX_EDITED]) + (_int(edited.get("more")) or 0)
        if paths or more:
            self._add(f"{where}: files edited", "\n".join(paths + ([f"and {more:,} more"] if more else [])), 2)
        failed = [f for f in _list(cap.get("failed")) if isinstance(f, dict)][-MAX_FAILED:]
        for i, f in enumerate(failed):
            tool = _word(f.get("tool")) or "a tool"
            code = _int(f.get("exit")) if f.get("exit") != -1 else -1  # an exit status, or -1 (a killed process)
            label = f"{where}{_at(f)}: failed command {i + 1} of {len(failed)} ({tool}"
            label += f", exit {code}" if code is not None else ""
            label += ", succeeded later)" if f.get("later_ok") is True else ")"
            command = _cut(flat(_raw(f.get("command"), MAX_COMMAND)), MAX_COMMAND)
            err = _cut(flat(_raw(f.get("error"), MAX_ERROR)), MAX_ERROR)
            self._add(label, f"command: {command}" + (f"\nerror: {err}" if err else ""), 3)
        last = cap.get("assistant") if isinstance(cap.get("assistant"), dict) else None
        if isinstance(last, dict):
            text = _cut(text_lines(_raw(last.get("text"), MAX_ASSISTANT)), MAX_ASSISTANT)
            if text:
                self._add(f"{where}{_at(last)}: last assistant message", text, 4)

    def _todos(self, todos: object) -> None:
        if not isinstance(todos, dict) or not isinstance(todos.get("items"), list):
            return
        items = todos["items"]
        lines = []
        pairs = [(i[0], i[1]) if isinstance(i, list) and len(i) >= 2 else (i, None) for i in items[:MAX_TODOS]]
        pairs.sort(key=lambda pair: OPEN_FIRST.get(pair[1], 2) if isinstance(pair[1], str) else 2)
        for text, status in pairs:
            line = _cut(flat(_raw(text, MAX_TODO)), MAX_TODO)
            lines.append(f"- [{flat(_raw(status, 40))[:40] or '?'}] {line}")
        more = len(items) - len(lines) + (_int(todos.get("more")) or 0)
        if more:
            lines.append(f"and {more:,} more")
        tool = _word(todos.get("tool")) or "the task list tool"
        if self.state_tasks is not None and _same_tasks(pairs, len(items), self.state_tasks):
            self._add(f"{self.where}{_at(todos)}: task list ({tool})", "(the same as the state's task list)", 0)
            return
        when = ", set before the checkpoint" if todos.get("before_checkpoint") is True else ""
        order = ", open items first" if len(lines) > 1 else ""
        self._add(f"{self.where}{_at(todos)}: task list ({tool}{when}{order})", "\n".join(lines) or "(empty)", 0)


def _same_tasks(pairs: list[tuple[object, object]], count: int, state: list[tuple[str, str]]) -> bool:
    """Whether the captured list holds the same items, with the same statuses, as the state's (its first MAX_TODO
    characters of each subject, on one line)."""
    if count != len(state) or count > MAX_TODOS:
        return False

    def key(text: object, status: object) -> tuple[str, str]:
        return flat(_raw(text, MAX_TODO))[:MAX_TODO].rstrip("…"), flat(_raw(status, 40))[:40]

    return sorted(key(t, s) for t, s in pairs) == sorted(key(t[:MAX_TODO], s) for t, s in state)


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _at(part: dict[str, object]) -> str:
    line, when = _int(part.get("line")), _stamp(part.get("ts"))
    return (f" line {line}" if line is not None else "") + (f" at {when}" if when else "")


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def section(o: Sections) -> None:
    """The section, its parts within the plan's cap (see the module's docstring); every cut named."""
    d, p = o.d, o.p
    m: Material | None = d.capture
    if m is None:
        return
    if p.capture == 0:
        o.cut(3, LEFT_OUT, "the capture")
        return
    room = m.full if p.capture is None else p.capture
    given: dict[int, int] = {}
    for i, part in sorted(enumerate(m.parts), key=lambda x: x[1].rank):
        take = min(len(part.body), room)
        if take >= _SHORTEST or take == len(part.body):
            given[i] = take
            room -= take
    shown = []
    cut = False
    for i, part in enumerate(m.parts):
        if i not in given:
            cut = True
            continue
        body, was_cut = shorten_quoted(part.body, given[i])
        note = o.note("cut: `rehydrate log --op compaction --json` shows it all") if was_cut else ""
        cut = cut or was_cut
        shown.append(fence_body(body, part.source, d.token, note))
    if cut:
        o.cut(3, "the end of " + LEFT_OUT, "end of the capture")
    o.sections.append("## Just before the compaction\n" + "\n".join([m.header, *shown]))
