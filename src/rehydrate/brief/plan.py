"""The brief's material: what goes in (BriefInput), each text cleaned only as far as a brief within the budget could
show it (Draft), and the knobs that the fitting turns (Plan)."""

from __future__ import annotations

from rehydrate.brief.fence import flat, n_chars, quoted_lines, shorten_quoted, text_lines, untoken
from rehydrate.store import layout
from rehydrate.store.latches import index
from rehydrate.text import quoted, shorten

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from rehydrate.brief.capture import Material
    from rehydrate.checks import Finding
    from rehydrate.store.latches.index import Invariants

_HEX = frozenset("0123456789abcdef")
_HEADER_LINES = {  # (a state made before supersede and withdraw keeps the header it was made with)
    ln for h in (layout.INVARIANTS_HEADER, layout.INVARIANTS_HEADER_V1) for ln in h.split("\n") if ln.strip()
}
ENTRY_MIN = 40  # the shortest a rejected approach gets: its id and the start of its text
REJECTED_CAP = 1200  # the longest a rejected approach is shown
_DECISION_CAP = 500  # the longest a decision is shown
FINDING_CAP = 400  # the longest a ledger line is shown
_RECORD_CAP = 1200  # the longest the last WAL record is shown
DEFERRED = "not run at session start: "  # how the ledger's note of what hook scope left to recover starts


def _date_word(rest: str) -> int:
    """The length of the "YYYY-MM-DD rejected: " (or "decision: ") rest starts with, else 0 (str methods: no re)."""
    digits = rest[:4] + rest[5:7] + rest[8:10]
    if len(digits) == 8 and digits.isascii() and digits.isdigit() and rest[4] + rest[7] == "--":
        for word in (" rejected: ", " decision: "):
            if rest.startswith(word, 10):
                return 10 + len(word)
    return 0


class BriefInput:
    """What goes into a brief; `render` turns it into bounded text."""

    def __init__(
        self,
        folder: str,
        actor: str,
        goal: str | None,
        invariants: str | None,
        handoff: str | None,
        extras: list[tuple[str, str]],
        next: str | None,
        last_record: str | None,
        findings: list[Finding],
        confidence: str,
        next_action: str | None,
        preface: str | None = None,
        path: str = "",
        sizes: dict[str, int] | None = None,
        invariants_read: Invariants | None = None,
        handoff_tail: str | None = None,
        capture: object = None,
        capture_meta: dict[str, object] | None = None,
        ask: str | None = None,
        deferred: str | None = None,
    ) -> None:
        self.folder = folder  # as shown in sources: state
        self.actor = actor
        self.goal = goal
        self.invariants = invariants
        self.handoff = handoff
        self.extras = extras  # (file name, text), lexical order
        self.next = next
        self.last_record = last_record
        self.findings = findings
        self.confidence = confidence
        self.next_action = next_action
        self.preface = preface  # said before everything (for example: a compaction just happened)
        self.path = path  # the state folder's real path, named in the header
        self.sizes = sizes  # bytes on disk of each view file by name; a text may be only a prefix of its file
        self.invariants_read = invariants_read  # 10_invariants.md as read by index.scan_invariants (else: invariants)
        self.handoff_tail = handoff_tail  # the handoff's end, when `handoff` is only its start (index.head_tail)
        self.pc = (layout.NEXT, layout.HANDOFF)  # the actor's own next and handoff files (store/actors.py)
        # the capture of the compaction after the last checkpoint (schema v1, untrusted: brief/capture.py), and what
        # the header says of its record: {"seq", "ts", "phase", "checkpoint"}
        self.capture = capture
        self.capture_meta = capture_meta
        self.ask = ask  # the one fact to ask a human for, when no next safe action is known (checks/ledger)
        self.deferred = deferred  # what hook scope left to `rehydrate recover` (checks/ledger), dropped under terse
        # lines of work merged and not yet chosen between (Snapshot.merged: untrusted records), and the author of each
        # entry of 10 by its id when the state has several actors (brief/read.py: annotate)
        self.merged: list[object] | None = None
        self.authors: dict[str, str] = {}
        self.tasks: str | None = None  # the task-list view (30_tasks.md or tasks/<actor>.md: store/tasks.py)


class Brief:
    def __init__(self, text: str, omitted: list[str], token: str = "") -> None:
        self.text = text
        self.omitted = omitted
        self.token = token


class Piece:
    """One untrusted text, cleaned only as far as any brief within the budget could show it."""

    def __init__(self, raw: str | None, room: int, size: int | None, one_line: bool = False) -> None:
        raw = raw or ""
        head = raw[:room]
        self.text = flat(head) if one_line else text_lines(head)
        self.partial = len(raw) > room or (size is not None and size > len(raw.encode("utf-8", "replace")))
        if self.partial and not self.text:  # nothing printable in what was read: say there is more
            self.text = "…"
        self.total = f"{size:,} bytes" if size is not None else n_chars(len(raw))


class _Entry:
    """A line of 10_invariants.md as shown: `> `, then the line, cleaned."""

    def __init__(self, raw: str, room: int, token: str, longer: bool = False) -> None:
        self.partial = longer or len(raw) > room
        self.line = untoken(flat(raw[:room]), token)
        self.id = layout.entry_id(self.line) or ""

        self._short: str | None = None

    def show(self, cap: int | None) -> tuple[str, bool]:
        if not self.partial and (cap is None or len(self.line) + 2 <= cap):
            return "> " + self.line, False
        line = self._short
        if line is None:  # shortened: the id, then the text without its date and kind (found once per entry)
            line = self.line
            if self.id:
                rest = line[len(self.id) + 3 :]
                line = f"- {self.id} {rest[_date_word(rest) :]}"
            self._short = line
        cap = max(len(line) + 3 if cap is None else cap, len(self.id) + 6)
        text, _ = shorten(line, cap - 2)
        text = text if text.endswith("…") else text + "…"
        return "> " + (f"- {self.id} …" if self.id and text == f"- {self.id}…" else text), True


class Plan:
    """How far each part is cut: the knobs the fitting turns, least important first."""

    def __init__(self, d: Draft) -> None:
        self.record = True
        self.extras = len(d.extras)  # the first n fitting extras are shown
        self.decisions = len(d.decisions)  # the newest n are shown
        self.handoff: int | None = None  # the most characters of its quoted text; 0: left out
        self.rejected_cap: int | None = REJECTED_CAP
        self.rejected = len(d.rejected)  # the newest n are shown; the others named by an id range
        self.goal: int | None = None
        self.next: int | None = None
        self.preface: int | None = None
        self.action: int | None = None
        self.capture: int | None = None  # the most characters of the capture's quoted text; 0: left out
        self.tasks: int | None = None  # the most characters of the task list's quoted text; 0: left out
        self.quotes = True  # the ledger's quotes shown (False: named under "Left out")
        self.ledger = 0  # 0 every finding; 1 ok ones counted; 2 one per check and status; 3 counts; 4 one count
        self.head: int | None = 120  # the most characters of the path and of the checkpoint title
        self.terse = False  # "Left out" in short words
        self.howto = True  # the last line, how to record (compose.RECORD): given up second, given back last


class Draft:
    """The brief's material, cleaned (only as much of each text as could be shown), ready to compose."""

    def __init__(self, inp: BriefInput, budget: int, token: str) -> None:
        self.token = token
        room = 2 * budget  # no brief within the budget shows more of one text than this
        sizes = inp.sizes or {}
        tk = token

        def piece(raw: str | None, name: str, one_line: bool = False, limit: int = room) -> Piece:
            p = Piece(raw, limit, sizes.get(name), one_line)
            p.text = untoken(p.text, tk)
            return p

        self.f = untoken(flat(inp.folder[:200]), tk)[:24] or "state"
        self.pc = inp.pc  # 99_next.md and 20_handoff.md, or an actor's next/<actor>.md and handoff/<actor>.md
        self.actor = untoken(flat(inp.actor[:200]), tk)[:64]
        self.path = untoken(flat(inp.path[:8192]), tk)
        self.preface = piece(inp.preface, "", one_line=True)  # the caller's notice: one line, never a heading
        goal = piece(inp.goal, layout.GOAL)
        if goal.text.startswith("# Goal\n"):
            goal.text = goal.text[len("# Goal\n") :].lstrip("\n").replace("\n\n## Done when\n\n", "\n\nDone when: ")
        self.goal = goal
        self.goal_body = quoted_lines(goal.text) if goal.text else ""
        nxt = piece(inp.next, layout.NEXT)
        self.next = nxt
        self.next_body = quoted_lines(nxt.text) if nxt.text else ""
        first = (inp.next or "")[:2000].split("\n", 1)[0].rstrip()
        self.title = (
            untoken(_title(first[len("# Next (") : -1]), tk)
            if first.startswith("# Next (") and first.endswith(")")
            else "no checkpoint readable"
        )
        self._handoff(inp, room, piece)
        self.tasks_src = f"{self.f}/{layout.tasks_view(inp.pc[0])}"
        self.tasks = piece(inp.tasks, layout.TASKS)
        self.tasks_body = quoted_lines(self.tasks.text) if self.tasks.text else ""
        self.record = piece(inp.last_record, "", one_line=True, limit=2 * _RECORD_CAP)
        self.record_body, cut = (
            shorten_quoted(quoted_lines(self.record.text), _RECORD_CAP) if self.record.text else ("", False)
        )
        self.record.partial = self.record.partial or cut
        self._invariants(inp, budget, sizes.get(layout.INVARIANTS))
        self._extras(inp.extras, budget, sizes)
        self._ledger(inp, budget)
        self.capture: Material | None = None
        if inp.capture is not None:
            from rehydrate.brief.capture import Material  # only a brief after a captured compaction loads it

            self.capture = Material(inp.capture, inp.capture_meta, token, _task_pairs(self.tasks.text))
        self.merged, self.authors = inp.merged, inp.authors

    def _invariants(self, inp: BriefInput, budget: int, size: int | None) -> None:
        """Rejected approaches: all found (one scan of the bytes, index.scan_invariants), the newest whose ids could fit
        cleaned. Decisions: counted (the same scan), the newest read from the end while any brief within the budget
        could show them, each cleaned once."""
        inv = inp.invariants_read
        if inv is None:  # given as text: scanned the same way
            data = (inp.invariants or "").encode("utf-8", "replace")
            self.invariants_partial = size is not None and size > len(data)
            inv = index.scan_invariants(index.Source(data), budget // 12, 4 * budget)
        else:
            self.invariants_partial = False
        self.invariants_size = inv.size if inp.invariants_read is not None else size
        self.rejected_ids, self.rejected_at = inv.ids, inv.lines  # every rejected approach: id (ASCII), line number
        heads = [(h.decode("utf-8", "replace").rstrip("\r"), more) for h, more in inv.heads]
        self.rejected_unseen = len(inv.ids) - len(heads)
        cap = _water_level([len(x) for x, _ in heads], 2 * budget, 2 * ENTRY_MIN)
        self.rejected = [_Entry(x, cap, self.token, longer) for x, longer in heads]
        # the rejected approaches' part of the brief by (how many shown, the cap of each, terse): see compose
        self.rejected_parts: dict[tuple[int, int | None, bool], tuple[str | None, list[tuple[int, str, str]]]] = {}
        self.rejected_lines: dict[int | None, list[tuple[str, bool]]] = {}  # each entry as shown, by the cap
        out = {ident.decode("ascii", "replace") for ident in inv.out}
        # superseded or withdrawn: never shown (named, in the order they were taken out)
        self.out_of_force = list(dict.fromkeys(t for _, _, t in inv.lifts if t.encode() in inv.out))
        raw = inv.tail.decode("utf-8", "replace")
        newest: list[_Entry] = []
        taken = dashes = 0
        end = len(raw)
        while end >= 0 and taken <= budget:  # the newest first, while any brief within the budget could show them
            start = raw.rfind("\n", 0, end)
            line = raw[start + 1 : end].rstrip("\r")
            end = start
            if not line.strip() or line in _HEADER_LINES or line.startswith("#"):
                continue
            if line.startswith("- R-") and line[10:11] == " " and set(line[4:10]) <= _HEX:  # a rejected approach
                continue
            if out and line.startswith("- ") and (line[2:10] in out or (line[2:3] == "W" and layout.entry_lifts(line))):
                continue  # out of force, or the withdrawal that took it out
            entry = _Entry(line, _DECISION_CAP, self.token)
            dashes += line.startswith("- ")
            if entry.line:
                newest.append(entry)
                taken += len(entry.line)
        self.decisions: list[_Entry] = newest[::-1]
        # the lines starting with `- ` that are not rejected approaches, less those shown
        self.decisions_unseen = max(0, inv.dashes - len(inv.ids) - dashes)
        self.decision_lines = [e.show(_DECISION_CAP) for e in self.decisions]

    def _handoff(self, inp: BriefInput, room: int, piece: Callable[..., Piece]) -> None:
        """The handoff's start and, when it is too long to show whole, its end (from its first whole line)."""
        raw, tail = inp.handoff or "", inp.handoff_tail
        if raw in ("", "\n") and not tail:  # a cleared note (`handoff --clear` writes one newline): no section
            self.handoff, self.handoff_body, self.handoff_tail = Piece("", room, None), "", ""
            return
        if tail is None and len(raw) > 2 * room:
            raw, tail = raw[:room], raw[-room:]
        self.handoff = piece(raw, layout.HANDOFF)
        self.handoff_body = quoted_lines(self.handoff.text) if self.handoff.text else ""
        self.handoff_tail = ""
        if tail:
            tail = tail[-room:]
            cut = tail.find("\n") + 1
            text = untoken(text_lines(tail[cut:] if 0 < cut < len(tail) else "…" + tail), self.token)
            self.handoff_tail = quoted_lines(text) if text else ""
            self.handoff.partial = True
            if not self.handoff.text:  # nothing printable in its start: say there is more
                self.handoff.text, self.handoff_body = "…", "> …"

    def _extras(self, extras: list[tuple[str, str]], budget: int, sizes: dict[str, int]) -> None:
        """The files that fit are shown whole, in order; a file that cannot fit is only named (and never cleaned)."""
        self.extras: list[tuple[str, str, str]] = []  # (source, quoted text, size) of the files that could be shown
        self.too_large: list[tuple[str, str]] = []  # (source, size) of the others
        shown = 0
        for name, raw in extras:
            source = f"{self.f}/" + untoken(flat(name[:200]), self.token)[:100]
            size = sizes.get(name)
            total = f"{size:,} bytes" if size is not None else n_chars(len(raw))
            if shown > budget or len(raw) > budget or (size is not None and size > len(raw.encode("utf-8", "replace"))):
                self.too_large.append((source, total))
                continue
            text = untoken(text_lines(raw), self.token)
            body = quoted_lines(text) if text else ">"
            if len(body) > budget:
                self.too_large.append((source, total))
                continue
            shown += len(body)
            self.extras.append((source, body, total))

    def _ledger(self, inp: BriefInput, budget: int) -> None:
        tk = self.token
        names: dict[str, str] = {}

        def name(raw: object) -> str:
            s = str(raw)
            if s not in names:
                names[s] = shorten(untoken(flat(s[:200]), tk), 64)[0] or "?"  # a Finding keeps them shorter
            return names[s]

        findings = inp.findings
        self.findings: list[tuple[str, str, str]] = []
        self.quotes: list[tuple[str, str]] = []  # (label, text) of what the shown findings quote, in order
        taken = 0
        for x in findings:  # in order, while any brief within the budget could show them
            if taken > budget:
                break
            message = untoken(flat(str(x.message)[: 2 * FINDING_CAP]), tk)
            self.findings.append((name(x.check), name(x.status), message))
            taken += min(len(message), FINDING_CAP) + 10
            for q in getattr(x, "quotes", ()):
                label = untoken(flat(f"{q.ref}, {x.check}: {q.what} ({q.source})"[:300]), tk)
                text = untoken(flat(str(q.text)[:2000]), tk)
                self.quotes.append((label, text))
                taken += len(label) + len(text) + 40
        self.findings_unseen = len(findings) - len(self.findings)
        self.counts: dict[str, dict[str, int]] = {}  # check -> status -> number of findings
        for x in findings:
            per = self.counts.setdefault(name(x.check), {})
            per[name(x.status)] = per.get(name(x.status), 0) + 1
        self.total_findings = len(findings)
        self.confidence = untoken(flat(inp.confidence[:2000]), tk) or "?"
        self.confidence_partial = len(inp.confidence) > 2000  # its end was never read: a cut, named like any other
        act = inp.next_action
        self.action = untoken(flat(act[: 2 * budget]), tk) if act else ""
        self.action_partial = bool(act) and len(act or "") > 2 * budget
        self.action_total = len(act or "")
        ask = inp.ask if not act else None
        self.ask = untoken(flat(ask[: 2 * budget]), tk) if ask else ""
        self.ask_partial = bool(ask) and len(ask or "") > 2 * budget
        self.ask_total = len(ask or "")
        deferred = untoken(flat(inp.deferred[:400]), tk)[:300] if inp.deferred else ""
        if deferred and not deferred.startswith(DEFERRED):  # a ledger line of its own, never one that imitates another
            deferred = DEFERRED + deferred
        self.deferred = deferred


def _task_pairs(view: str) -> list[tuple[str, str]] | None:
    """(subject, status) of each item of the task-list view as store/tasks.render writes it (`- [status] #id
    subject (blocked by ...)`), for the capture to say that its list is the same; None if there is no view."""
    if not view:
        return None
    pairs = []
    for line in view.split("\n"):
        status, sep, rest = line[3:].partition("] ") if line.startswith("- [") else ("", "", "")
        if not sep:
            continue
        if rest.startswith("#"):
            rest = rest.partition(" ")[2]
        pairs.append((rest.rsplit(" (blocked by ", 1)[0].strip(), status))
    return pairs


def _water_level(lengths: list[int], total: int, floor: int) -> int:
    """The largest cap (at least floor) with sum(min(length, cap)) <= total: long entries give way first."""
    lo, hi = floor, max(lengths, default=floor) + 1
    if sum(min(n, hi) for n in lengths) <= total:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if sum(min(n, mid) for n in lengths) <= total:
            lo = mid
        else:
            hi = mid
    return lo


def _title(text: str) -> str:
    """99_next.md's title in the brief's first line: as it is when it has the shape views.render_next gives it
    (`checkpoint 42, 2026-11-29T22:04Z, HEAD a1b2c3d`); else quoted (text.quoted), since the file arrived by git
    pull and may have been edited: its words never stand as the header's own."""
    parts = text.split(", ")
    if len(parts) == 3:
        what, when, where = parts
        seq = what.removeprefix("checkpoint ")
        plain_seq = what == "no checkpoint yet" or (seq != what and seq.isascii() and seq.isdigit())
        stamp = when[:-1].replace("-", "").replace("T", "").replace(":", "")
        plain_when = len(when) == 17 and when.endswith("Z") and stamp.isascii() and stamp.isdigit()
        sha = where.removeprefix("HEAD ")
        plain_where = where == "no git HEAD" or (
            sha != where and 0 < len(sha) <= 40 and not sha.strip("0123456789abcdef")
        )
        if plain_seq and plain_when and plain_where:
            return text
    return quoted(text, 200)
