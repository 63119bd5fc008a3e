"""The brief's material: what goes in (BriefInput), each text cleaned only as far as a brief within the budget could
show it (_Draft), and the knobs that the fitting turns (_Plan)."""

from __future__ import annotations

from rehydrate.brief.fence import _chars, _cut, _cut_quoted, _flat, _quoted_lines, _text, _untoken
from rehydrate.store import views

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.checks import Finding

_HEADER_LINES = {ln for ln in views.INVARIANTS_HEADER.split("\n") if ln.strip()}
ENTRY_MIN = 40  # the shortest a rejected approach gets: its id and the start of its text
REJECTED_CAP = 1200  # the longest a rejected approach is shown
_DECISION_CAP = 500  # the longest a decision is shown
FINDING_CAP = 400  # the longest a ledger line is shown
_RECORD_CAP = 1200  # the longest the last WAL record is shown
_HEX = "0123456789abcdef"
_HEADER_TEXT = frozenset(h for h in _HEADER_LINES if not h.startswith("#"))


def _date_word(rest: str) -> int:
    """The length of the "YYYY-MM-DD rejected: " (or "decision: ") rest starts with, else 0 (str methods: no re)."""
    digits = rest[:4] + rest[5:7] + rest[8:10]
    if len(digits) == 8 and digits.isascii() and digits.isdigit() and rest[4] + rest[7] == "--":
        for word in (" rejected: ", " decision: "):
            if rest.startswith(word, 10):
                return 10 + len(word)
    return 0


def _lines(raw: str) -> list[str]:
    """One scan of 10_invariants.md: each line that starts a rejected approach (its id: views.entry_id), with its
    trailing CRs, and "" for each line that is no entry (blank, a heading, a line of the header, trailing CRs aside);
    decisions are left out. With str methods: no `re` on the hook path (tests/cli/test_imports.py)."""
    out: list[str] = []
    for line in raw.split("\n"):
        if line[:4] == "- R-" and line[10:11] == " " and not line[4:10].strip(_HEX):
            out.append(line)
        elif line[:1] == "#" or not line.strip() or line.rstrip("\r") in _HEADER_TEXT:
            out.append("")
    return out


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


class Brief:
    def __init__(self, text: str, omitted: list[str], token: str = "") -> None:
        self.text = text
        self.omitted = omitted
        self.token = token


class _Piece:
    """One untrusted text, cleaned only as far as any brief within the budget could show it."""

    def __init__(self, raw: str | None, room: int, size: int | None, one_line: bool = False) -> None:
        raw = raw or ""
        head = raw[:room]
        self.text = _flat(head) if one_line else _text(head)
        self.partial = len(raw) > room or (size is not None and size > len(raw.encode("utf-8", "replace")))
        if self.partial and not self.text:  # nothing printable in what was read: say there is more
            self.text = "…"
        self.total = f"{size:,} bytes" if size is not None else _chars(len(raw))


class _Entry:
    """A line of 10_invariants.md as shown: `> `, then the line, cleaned."""

    def __init__(self, raw: str, room: int, token: str) -> None:
        self.partial = len(raw) > room
        self.line = _untoken(_flat(raw[:room]), token)
        self.id = views.entry_id(self.line) or ""

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
        text, _ = _cut(line, cap - 2)
        text = text if text.endswith("…") else text + "…"
        return "> " + (f"- {self.id} …" if self.id and text == f"- {self.id}…" else text), True


class _Plan:
    """How far each part is cut: the knobs the fitting turns, least important first."""

    def __init__(self, d: _Draft) -> None:
        self.record = True
        self.extras = len(d.extras)  # the first n fitting extras are shown
        self.decisions = len(d.decisions)  # the newest n are shown
        self.handoff: int | None = None  # the most characters of its quoted text; 0: left out
        self.rejected_cap: int | None = REJECTED_CAP
        self.rejected = len(d.rejected)  # the newest n are shown; ids of the others are folded into a count
        self.goal: int | None = None
        self.next: int | None = None
        self.preface: int | None = None
        self.action: int | None = None
        self.ledger = 0  # 0 every finding; 1 ok ones counted; 2 one per check and status; 3 counts; 4 one count
        self.head: int | None = 120  # the most characters of the path and of the checkpoint title
        self.terse = False  # "Left out" in short words


class _Draft:
    """The brief's material, cleaned (only as much of each text as could be shown), ready to compose."""

    def __init__(self, inp: BriefInput, budget: int, token: str) -> None:
        self.token = token
        room = 2 * budget  # no brief within the budget shows more of one text than this
        sizes = inp.sizes or {}
        tk = token

        def piece(raw: str | None, name: str, one_line: bool = False, limit: int = room) -> _Piece:
            p = _Piece(raw, limit, sizes.get(name), one_line)
            p.text = _untoken(p.text, tk)
            return p

        self.f = _untoken(_flat(inp.folder[:200]), tk)[:24] or "state"
        self.actor = _untoken(_flat(inp.actor[:200]), tk)[:64]
        self.path = _untoken(_flat(inp.path[:8192]), tk)
        self.preface = piece(inp.preface, "", one_line=True)  # the caller's notice: one line, never a heading
        goal = piece(inp.goal, views.GOAL)
        if goal.text.startswith("# Goal\n"):
            goal.text = goal.text[len("# Goal\n") :].lstrip("\n").replace("\n\n## Done when\n\n", "\n\nDone when: ")
        self.goal = goal
        self.goal_body = _quoted_lines(goal.text) if goal.text else ""
        nxt = piece(inp.next, views.NEXT)
        self.next = nxt
        self.next_body = _quoted_lines(nxt.text) if nxt.text else ""
        first = (inp.next or "")[:2000].split("\n", 1)[0].rstrip()
        self.title = (
            _untoken(_flat(first[len("# Next (") : -1]), tk)
            if first.startswith("# Next (") and first.endswith(")")
            else "no checkpoint readable"
        )
        self.handoff = piece(inp.handoff, views.HANDOFF)
        self.handoff_body = _quoted_lines(self.handoff.text) if self.handoff.text else ""
        self.record = piece(inp.last_record, "", one_line=True, limit=2 * _RECORD_CAP)
        self.record_body, cut = (
            _cut_quoted(_quoted_lines(self.record.text), _RECORD_CAP) if self.record.text else ("", False)
        )
        self.record.partial = self.record.partial or cut
        self._invariants(inp.invariants or "", budget, sizes.get(views.INVARIANTS))
        self._extras(inp.extras, budget, sizes)
        self._ledger(inp, budget)

    def _invariants(self, raw: str, budget: int, size: int | None) -> None:
        """Rejected approaches: all found (one scan), the newest whose ids could fit cleaned. Decisions: counted
        (one scan), the newest read from the end while any brief within the budget could show them, each cleaned once.
        """
        self.invariants_partial = size is not None and size > len(raw.encode("utf-8", "replace"))
        lines = _lines(raw)
        found = [x for x in lines if x]  # every rejected approach's line, in order (with its trailing CRs, if any)
        most = budget // 12  # only the newest rejected approaches whose ids could fit are cleaned
        self.rejected_unseen = max(0, len(found) - most)
        rejected = [x.rstrip("\r") for x in found[self.rejected_unseen :]]
        cap = _water_level([len(x) for x in rejected], 2 * budget, 2 * ENTRY_MIN)
        self.rejected = [e for e in (_Entry(x, cap, self.token) for x in rejected) if e.line]
        # the rejected approaches' part of the brief by (how many shown, the cap of each, terse): see compose
        self.rejected_parts: dict[tuple[int, int | None, bool], tuple[str | None, list[tuple[int, str, str]]]] = {}
        self.rejected_lines: dict[int | None, list[tuple[str, bool]]] = {}  # each entry as shown, by the cap
        entries = raw.count("\n") + 1 - (len(lines) - len(found))  # lines that are neither blank, header nor heading
        left = entries - len(found)  # decisions not yet read
        newest: list[_Entry] = []
        taken = 0
        end = len(raw)
        while (
            left and end >= 0 and taken <= budget
        ):  # the newest first, while any brief within the budget could show them
            start = raw.rfind("\n", 0, end)
            line = raw[start + 1 : end].rstrip("\r")
            end = start
            if not line.strip() or line in _HEADER_LINES or line.startswith("#"):
                continue
            rid = views.entry_id(line)
            if rid and rid[0] == "R":
                continue
            left -= 1
            entry = _Entry(line, _DECISION_CAP, self.token)
            if entry.line:
                newest.append(entry)
                taken += len(entry.line)
        self.decisions: list[_Entry] = newest[::-1]
        self.decisions_unseen = entries - len(found) - len(self.decisions)
        self.decision_lines = [e.show(_DECISION_CAP) for e in self.decisions]

    def _extras(self, extras: list[tuple[str, str]], budget: int, sizes: dict[str, int]) -> None:
        """The files that fit are shown whole, in order; a file that cannot fit is only named (and never cleaned)."""
        self.extras: list[tuple[str, str, str]] = []  # (source, quoted text, size) of the files that could be shown
        self.too_large: list[tuple[str, str]] = []  # (source, size) of the others
        shown = 0
        for name, raw in extras:
            source = f"{self.f}/" + _untoken(_flat(name[:200]), self.token)[:100]
            size = sizes.get(name)
            total = f"{size:,} bytes" if size is not None else _chars(len(raw))
            if shown > budget or len(raw) > budget or (size is not None and size > len(raw.encode("utf-8", "replace"))):
                self.too_large.append((source, total))
                continue
            text = _untoken(_text(raw), self.token)
            body = _quoted_lines(text) if text else ">"
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
                names[s] = _cut(_untoken(_flat(s[:200]), tk), 64)[0] or "?"  # a Finding keeps them shorter
            return names[s]

        findings = inp.findings
        self.findings: list[tuple[str, str, str]] = []
        taken = 0
        for x in findings:  # in order, while any brief within the budget could show them
            if taken > budget:
                break
            message = _untoken(_flat(str(x.message)[: 2 * FINDING_CAP]), tk)
            self.findings.append((name(x.check), name(x.status), message))
            taken += min(len(message), FINDING_CAP) + 10
        self.findings_unseen = len(findings) - len(self.findings)
        self.counts: dict[str, dict[str, int]] = {}  # check -> status -> number of findings
        for x in findings:
            per = self.counts.setdefault(name(x.check), {})
            per[name(x.status)] = per.get(name(x.status), 0) + 1
        self.total_findings = len(findings)
        self.confidence = _untoken(_flat(inp.confidence[:2000]), tk) or "?"
        self.confidence_partial = len(inp.confidence) > 2000  # its end was never read: a cut, named like any other
        act = inp.next_action
        self.action = _untoken(_flat(act[: 2 * budget]), tk) if act else ""
        self.action_partial = bool(act) and len(act or "") > 2 * budget
        self.action_total = len(act or "")


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
