"""What a write needs beside the write path itself (state.py): what refuses it, the goal a checkpoint carries when
none is given, and how a record renders the replaceable view it produces."""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError, UsageError
from rehydrate.fs import lock as fslock
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem, layout, records, views
from rehydrate.store.evidence import inforce, prepare
from rehydrate.store.latches import lifts
from rehydrate.store.layout import CONTAINS_LABEL, GUARD_LABEL, INVARIANTS, MAX_FIELD
from rehydrate.store.local import place as local
from rehydrate.store.local import teamseen
from rehydrate.store.session import Outcome, flush
from rehydrate.store.wal import record as wal
from rehydrate.store.write.apply import apply, check_archive
from rehydrate.text import cap, clean, did_you_mean

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.store.local.seen import Seen
    from rehydrate.store.session import Outcome, Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record


def refuse_unsafe(state: State, snap: Snapshot, touches: tuple[str, ...] = ()) -> None:
    """A state file that is a symlink, FIFO or folder means the folder cannot be trusted: write nothing.
    A view the write would change that holds git's conflict markers is never changed: finish the merge first."""
    for p in snap.problems:
        if p.code in ("not-regular-file", "unreadable"):
            raise RehydrateError(f"refusing to write: {p.message}", "move it away, then run the command again")
    for p in snap.problems:
        if p.code == "forged" and p.file == state.wal_rel:  # a signed record written now would vouch for it
            raise RehydrateError(
                f"refusing to write: {p.message} [forged]",
                f"find who changed {p.file} (git log -p -- {p.file}) and restore it from git; a new signed record "
                "would vouch for what is there",
            )
        if p.code == "merge-conflict" and p.file in [state.rel(name) for name in touches]:
            raise RehydrateError(
                f"refusing to write: {p.file} line {p.line} holds an unresolved git merge conflict "
                "[merge-conflict]; this command would change it",
                p.message if p.file != state.rel(INVARIANTS) else f"finish the merge first: {p.message}",
            )


def current_goal(state: State, snap: Snapshot) -> str:
    name = state.pc(snap.last)[0]  # this actor's program counter: 99_next.md, or next/<actor>.md
    current = state.view_bytes(name, snap)
    if current is not None and views.sha(current) == snap.last["views"].get(name):
        goal = views.parse_next(current.decode("utf-8", "replace")).get("goal")
        if goal:
            return goal
    if len(snap.heads) > 1:  # lines of work merged (99 holds each side's): my line's last checkpoint (graph.py)
        for rec in snap.head_views.get(layout.NEXT, []):  # mine first, newest first
            goal = records.field(records.data_of(rec), "goal", str)
            if records.op_of(rec) is records.CHECKPOINT and goal is not None:
                return str(goal)
    producer = views.last_producer(state, name)  # 99 was edited or deleted: ask the WAL (a full read)
    if producer is not None and records.op_of(producer) is records.CHECKPOINT:
        return str(producer["data"]["goal"])
    from rehydrate.store.latches import latch as latches  # off the hook path (tests/cli/test_cli_imports.py)

    return str(latches.goal_data(state)["goal"]).split("\n")[0]


def upgrade_attributes(state: State, snap: Snapshot) -> None:
    """A write upgrades state/.gitattributes as earlier versions wrote it (exactly: a file the user changed is
    left alone) to the text that merges the logs with git's union driver (one lstat when it is not that)."""
    path = state.path(layout.GITATTRIBUTES)
    old = layout.GITATTRIBUTES_V1.encode()
    st = fsio.lstat(path)
    if st is None or st.st_size != len(old) or fsio.read_bytes(path, len(old) + 1, WORDS) != old:
        return
    fsio.replace(path, layout.GITATTRIBUTES_TEXT.encode(), "view.replace", words=WORDS)
    snap.repaired.append(
        f"upgraded {state.rel(layout.GITATTRIBUTES)} to merge logs with git's union driver: "
        "commit it on your main line before branching"
    )


def acknowledge(state: State, snap: Snapshot, rec: Record, acknowledged: dict[str, Any] | None, cache: Seen) -> None:
    """A checkpoint after a rollback was named ends its report: this log's (the record carries what was lost, in
    data.rolled_back) and each teammate's (store/local/teamseen.py)."""
    if any(p.code == "rolled-back" and p.file != state.wal_rel for p in snap.problems):
        for actor in teamseen.acknowledge(state):
            snap.repaired.append(
                f"recorded at checkpoint {rec['seq']} that {state.log_rel(actor)} was rolled back upstream; "
                "no longer reported"
            )
    if acknowledged is not None:
        snap.lost = cache.lost = None
        snap.repaired.append(
            f"recorded in checkpoint {rec['seq']} that {state.wal_rel} "
            f"was rolled back ({acknowledged['count']} record(s) this clone had seen); no longer reported"
        )


def written_on(state: State, git: Any) -> str | None:
    """The branch a write was made on: from the git facts a checkpoint gathered, else HEAD read (local/place.py)."""
    if isinstance(git, dict) and "head" in git:
        branch = git.get("branch")
        return branch if isinstance(branch, str) else None
    if isinstance(git, dict):  # not in a repository
        return None
    return local.branch(state.root)


_KINDS = {records.INVARIANT.name: "D", records.REJECT.name: "R", records.WITHDRAW.name: "W"}  # an id's first letter


def entry_data(
    op: str, text: str, because: str, guard: str | None, contains: str | None, supersedes: str | None
) -> dict[str, Any]:
    """A decision's, rejected approach's or withdrawal's data (its id and line are minted under the lock: mint_entry),
    each field cleaned to one line; UsageError for one that cannot be written. A withdrawal's text is the id of the
    entry it withdraws."""
    kind = _KINDS[op]
    text, because = clean(text, one_line=True), clean(because, one_line=True)
    guard = clean(guard, one_line=True) if guard is not None else None  # "" is refused, never dropped
    contains = clean(contains, one_line=True) if contains is not None else None
    target = text if kind == "W" else supersedes
    if target is not None:
        target = _entry_id(target, "withdraw" if kind == "W" else "supersedes")
        text = target if kind == "W" else text
    word = {"D": "decision", "R": "approach", "W": "withdrawal's entry id"}[kind]
    check_entry(word, text, because, guard, contains)
    data: dict[str, Any] = {"text": text, "because": because}
    for name, value in (("guard", guard), ("contains", contains), ("supersedes", None if kind == "W" else target)):
        if value:
            data[name] = value
    return data


def check_entry(word: str, text: str, because: str, guard: str | None, contains: str | None) -> None:
    """UsageError for an entry of 10_invariants.md that cannot be written: empty, too long, or faking a guard."""
    if not text:
        raise UsageError(f"the {word} is empty")
    if not because:
        raise UsageError("the reason is empty: say why, so that a later session does not undo it", field="because")
    named = {"text": word, "because": "reason"}
    for name, value, what in (("guard", guard, "a path glob or a command pattern"), ("contains", contains, "a text")):
        if value is not None and not value.strip():  # an empty watch would silently watch nothing
            raise UsageError(f"the {name} is empty", f"give {what}, or leave --{name} out", field=name)
    fields = (("text", text), ("because", because), ("guard", guard or ""), ("contains", contains or ""))
    for name, value in fields:
        cap(name, value, MAX_FIELD)
    labels = (GUARD_LABEL, CONTAINS_LABEL)
    for name, value in fields[:3]:  # the line's guard is read back from its end: nothing before may fake one
        label = next((lb.strip() for lb in labels if lb in f" {value} "), None)
        if label:
            raise UsageError(
                f"the {named.get(name, name)} holds {label!r}, which marks a guard in {INVARIANTS}",
                f"write it another way (for example {label[:-1]!r} without the colon)",
            )


def _entry_id(ident: str, field: str) -> str:
    """An id that names a decision or a rejected approach, as written in a line (`d-6D463D,` is D-6d463d; UsageError
    if not one)."""
    ident = ident.strip().strip(",;:.")
    if len(ident) == 8 and ident[1] == "-":
        ident = ident[0].upper() + "-" + ident[2:].lower()
    if len(ident) != 8 or layout.entry_id(f"- {ident} ") is None or ident[0] == "W":
        why = "a withdrawal is not an entry" if ident[:2] == "W-" and len(ident) == 8 else "not an entry id"
        raise UsageError(
            f"{ident[:40]!r}: {why}",
            "name a decision (D-xxxxxx) or a rejected approach (R-xxxxxx) of 10_invariants.md",
            field=field,
        )
    return ident


def check_lift(state: State, snap: Snapshot, data: dict[str, Any], op: str) -> None:
    """Under the lock: the entry a write would take out of force is in 10_invariants.md and still in force (the
    file is read for it: taking an entry out of force is rare, every other write reads none of it)."""
    target = data["text"] if _KINDS[op] == "W" else data.get("supersedes")
    if target is None:
        return
    have = state.view_bytes(INVARIANTS, snap) or b""
    rel = state.rel(INVARIANTS)
    key = f"- {target} ".encode()
    if not (have.startswith(key) or b"\n" + key in have):
        ids = [line[2:10] for line in have.decode("utf-8", "replace").split("\n") if layout.entry_id(line)]
        hint = did_you_mean(target, [i for i in ids if i[0] != "W"]).strip()
        raise UsageError(f"no entry {target} in {rel}", hint or "an entry's id starts its line (`- D-xxxxxx ...`)")
    by = lifts.out_of_force(have).get(target)
    if by is not None:
        raise UsageError(
            f"{target} is no longer in force: {by} took it out in {rel}",
            "an entry out of force stays out; record a new entry that says why it holds again",
        )


def mint_entry(state: State, data: dict[str, Any], op: str) -> str:
    """An entry's id and line, minted under the lock from the time returned (its record carries the same time:
    latches._minted confirms an id from its record): data gains id, line and line_sha256."""
    ts = wal.now()
    text, kind = data["text"], _KINDS[op]
    ident = f"{kind}-" + wal.sha256(f"{state.actor}\0{ts}\0{text}".encode())[:6]
    guard, contains, sup = data.get("guard"), data.get("contains"), data.get("supersedes")
    line = layout.entry_line(kind, ident, ts[:10], text, data["because"], guard, contains, sup)
    data.update(id=ident, line=line, line_sha256=wal.sha256(line.encode()))
    return ts


def status_extra(state: State, out: Any) -> dict[str, Any]:
    """What `status` shows beside the problems: the goal, the last checkpoint, the next action (this actor's own
    program counter), the record count and the merged lines of work, cleaned for a terminal (the files may hold
    anything: escape sequences, NUL, CR, a right-to-left override)."""
    _sync_pending(state, out)
    _ignored(state, out)
    nxt = state.view_text(state.pc(out.record)[0]) or ""
    goal = (state.view_text(layout.GOAL) or "").split("\n")
    parsed = views.parse_next(nxt)
    mine = out.merged[0].get("checkpoint") if out.merged else None
    if isinstance(mine, dict):  # lines of work merged: the file holds each side's; mine is the first line
        parsed = {k: str(mine.get(k, "")) for k in ("done", "next")}
    return {
        "goal": clean(next((ln for ln in goal if ln.strip() and not ln.startswith("#")), ""), one_line=True),
        "checkpoint": clean(nxt.split("\n", 1)[0].removeprefix("# Next (").removesuffix(")"), one_line=True)
        if not out.merged
        else f"none chosen yet: {len(out.merged)} lines of work were merged",
        "next": {k: clean(v) for k, v in parsed.items()},
        "records": out.record["seq"] if out.record else None,
        "lines": out.merged,
    }


def rotate(state: State) -> Outcome:
    """State.rotate: under the lock, the log archived and a new one started by a rotate record."""
    from rehydrate.store.latches.latch import rotate_data  # off the hook path (tests/cli/test_cli_imports.py)

    with fslock.locked(state.root, words=WORDS):
        snap = state.begin()
        refuse_unsafe(state, snap)
        upgrade_attributes(state, snap)
        data = rotate_data(state, snap.last)
        kept = inforce.carried(prepare.gather(state, snap).evidence)  # the stamps and approvals stay in force
        if kept is not None:
            data["evidence"] = kept
        check_archive(state, {"seq": snap.last["seq"] + 1, "data": data}, None)  # before anything is written
        rec = state.append(snap, "rotate", data)
        if state.session.joined is not None:
            apply(state, state.session.joined)
        apply(state, rec)
        flush(state)
        return Outcome(record=rec, repaired=snap.repaired, problems=snap.problems)


def _ignored(state: State, out: Any) -> None:
    """rehydrate's own files that git ignores (a root `*.pub`, `mail/` in state/.gitignore): a plain commit leaves
    them out, and a teammate's clone has records without their keys or messages (store/git/share.py)."""
    from rehydrate.store.git import share  # git runs for `status` alone: the write path does not load the runner

    message = share.ignored_message(state.root)
    if message is not None:
        out.problems.append(Problem("state-ignored", state.rel(), None, message))


def _sync_pending(state: State, out: Any) -> None:
    """A sync stopped between the two parts of a step (sync.pending in the worktree's folder: one lstat) leaves
    the index or HEAD half moved: named until a sync finishes it (store/git/share.py)."""
    if fsio.lstat(os.path.join(state.local, "sync.pending")) is None:
        return
    from rehydrate.store.git import share  # as in _ignored

    message = share.pending_message(state.root)
    if message is not None:
        out.problems.append(Problem("sync-interrupted", state.rel(), None, message))
