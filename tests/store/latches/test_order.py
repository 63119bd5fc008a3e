"""store/latches/order.py: 10_invariants.md after git's union merge of two branches (real git): every entry of both
sides bound once, an edit made on one side still named (never laundered by the merge), exact copies named and
removed by the next write, and a second actor's legacy `init` sharing the header's lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, records
from rehydrate.store.latches.latch import lines
from rehydrate.store.latches.order import actor_lines, bound_lines, check_lines, minted_as
from rehydrate.store.state import State
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal

INV = "10_invariants.md"


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A", "state")
    git(repo, "commit", "-qm", message)


def _base(repo: Path) -> State:
    """A state on main with one decision, committed (the union attributes come with it)."""
    st, _ = State.init(repo / "state", "Ship the parser", None)
    st.invariant("Base decision", because="it is the base")
    _commit(repo, "state")
    return st


def _check(repo: Path) -> tuple[list[tuple[str, int]], list[int]]:
    """The line check of the merged 10 against the merged log's records (read as they are in the file)."""
    log = repo / "state" / "wal" / "agent.jsonl"
    recorded = {"agent": actor_lines(wallines.records(str(log)))}
    found, unrecorded = check_lines(lines((repo / "state" / INV).read_bytes()), recorded)
    return [(code, n) for code, n, _ in found], unrecorded


def _edit_last_entry(repo: Path) -> str:
    """Change the text of the file's last entry by hand (what exp D does on one branch); the edited line."""
    p = repo / "state" / INV
    text = p.read_text().splitlines(keepends=True)
    edited = text[-1].replace("Base decision", "Base decision, quietly changed")
    p.write_text("".join(text[:-1]) + edited)
    return edited.rstrip("\n")


def test_two_branches_merged_bind_every_entry_once(repo: Path) -> None:
    st = _base(repo)
    git(repo, "checkout", "-qb", "feat")
    State.open(st.root).invariant("Feature decision", because="feat")
    State.open(st.root).checkpoint(done="feat work", next="feat next")
    _commit(repo, "feat")
    git(repo, "checkout", "-q", "main")
    State.open(st.root).reject("Main rejected", because="main")
    _commit(repo, "main")
    git(repo, "merge", "-q", "--no-edit", "feat")
    assert not git(repo, "ls-files", "-u")  # the union attributes merged it
    assert _check(repo) == ([], [])
    text = (repo / "state" / INV).read_text()
    assert text.count("Feature decision") == 1 and text.count("Main rejected") == 1


@pytest.mark.parametrize("how", ["merge", "rebase", "cherry-pick", "stash-pop"])
def test_an_edit_on_one_side_is_named_after_the_merge_never_laundered(repo: Path, how: str) -> None:
    """Exp D: one side edits a recorded line, the other appends; union keeps the original AND the edit. The edit
    carries the recorded entry's id: latch-changed, never an unrecorded line that the next write would adopt."""
    st = _base(repo)
    if how == "stash-pop":
        edited = _edit_last_entry(repo)  # uncommitted, then stashed
        git(repo, "stash", "-q")
        State.open(st.root).invariant("Main decision", because="main")
        _commit(repo, "main")
        git(repo, "stash", "pop", "-q")
    else:
        git(repo, "checkout", "-qb", "feat")
        edited = _edit_last_entry(repo)
        State.open(st.root).invariant("Feature decision", because="feat")
        _commit(repo, "feat edits a recorded line")
        git(repo, "checkout", "-q", "main")
        State.open(st.root).invariant("Main decision", because="main")
        _commit(repo, "main")
        if how == "merge":
            git(repo, "merge", "-q", "--no-edit", "feat")
        elif how == "rebase":
            git(repo, "checkout", "-q", "feat")
            git(repo, "rebase", "-q", "main")
        else:
            git(repo, "cherry-pick", "feat")
    assert not git(repo, "ls-files", "-u")
    text = (repo / "state" / INV).read_text().splitlines()
    original = next(x for x in text if x.endswith("decision: Base decision because: it is the base"))
    assert original in text and edited in text  # both kept by the union
    found, unrecorded = _check(repo)
    assert ("latch-changed", text.index(edited) + 1) in found, found
    assert text.index(edited) + 1 not in unrecorded


def test_a_cherry_picked_record_merged_back_binds_its_line_once(repo: Path) -> None:
    """Exp C: main cherry-picks feat's entry, both go on, feat is merged: the log holds the picked record twice (the
    same h); its line binds once. And 10 may hold the line twice: the copy is a duplicate-line, not unrecorded."""
    st = _base(repo)
    git(repo, "checkout", "-qb", "feat")
    State.open(st.root).invariant("Picked decision", because="feat")
    _commit(repo, "feat: picked")
    picked = git(repo, "rev-parse", "HEAD").strip()
    State.open(st.root).invariant("Later feature decision", because="feat")
    _commit(repo, "feat: later")
    git(repo, "checkout", "-q", "main")
    State.open(st.root).invariant("Main decision", because="main")
    _commit(repo, "main")
    git(repo, "cherry-pick", picked)
    git(repo, "merge", "-q", "--no-edit", "feat")
    assert not git(repo, "ls-files", "-u")
    hashes = [r["h"] for r in records(repo / "state")]
    assert len(hashes) > len(set(hashes))  # the picked record, twice
    found, unrecorded = _check(repo)
    assert [c for c, _ in found if c != "duplicate-line"] == [] and unrecorded == []
    text = (repo / "state" / INV).read_text().splitlines()
    copies = [n for n, x in enumerate(text, 1) if x.endswith("Picked decision because: feat")]
    assert [n for c, n in found] == copies[1:]  # every copy but the bound one


def test_duplicate_records_do_not_bind_their_line_twice() -> None:
    rec = {"h": "a" * 64, "prev": None, "op": "invariant", "data": {"line": "- D-aaaaaa x"}}
    assert actor_lines(iter([rec, rec])) == [("- D-aaaaaa x", True)]


def test_graph_order_each_line_follows_its_own_ancestors_only() -> None:
    """After a union merge, a record's lines must follow its own ancestors' lines and are unordered against the other
    line of work's: here the file holds feat's lines before main's, which the log lists first."""

    def rec(h: str, prev: str | None, line: str | None = None, op: str = "invariant", **more: object) -> dict:  # type: ignore[type-arg]
        return {"h": h, "prev": prev, "op": op, "data": {"line": line} if line else {}, **more}

    recs = [rec("a", None, "- D-aaaaaa a"), rec("m", "a", "- D-111111 m"), rec("f", "a", "- D-222222 f")]
    lines_ = ["- D-aaaaaa a", "- D-222222 f", "- D-111111 m"]
    assert check_lines(lines_, {"agent": actor_lines(iter(recs))}) == ([], [])
    # the join: a line after a merge record follows both sides
    joined = [*recs, rec("j", "m", op="merge", parents=["f"]), rec("x", "j", "- D-333333 x")]
    found, _ = check_lines(
        ["- D-aaaaaa a", "- D-111111 m", "- D-333333 x", "- D-222222 f"], {"a": actor_lines(iter(joined))}
    )
    assert [(c, n) for c, n, _ in found] == [("latch-reordered", 3)]
    assert check_lines([*lines_, "- D-333333 x"], {"agent": actor_lines(iter(joined))}) == ([], [])
    # a join (a new actor's first record) and a merge record bind no line
    assert bound_lines(rec("j", None, op="join", data={"goal": "0" * 64})) == []
    assert bound_lines(joined[3]) == []


def test_a_rotate_merged_with_an_append_keeps_the_other_sides_line() -> None:
    """A union of a rotate (the log replaced by one record) with an append brings the archived records back before
    the rotate: the rotate's lines stand for its ancestors' (not bound twice), the other side's line stays recorded."""

    def rec(h: str, prev: str | None, line: str) -> dict:  # type: ignore[type-arg]
        return {"h": h, "prev": prev, "op": "invariant", "data": {"line": line}}

    base = [rec("a", None, "- D-aaaaaa a"), rec("b", "a", "- D-bbbbbb b")]
    rot = {"h": "r", "prev": "b", "op": "rotate", "data": {"lines": ["- D-aaaaaa a", "- D-bbbbbb b"]}}
    # the other side's record may come before the rotate in the file (union: base, ours, theirs)
    got = actor_lines(iter([*base, rec("f", "b", "- D-ffffff f"), rot]))
    assert sorted(t for t, _ in got) == ["- D-aaaaaa a", "- D-bbbbbb b", "- D-ffffff f"]  # each once
    assert check_lines(["- D-aaaaaa a", "- D-bbbbbb b", "- D-ffffff f"], {"agent": got}) == ([], [])


def _colliding(ts: str) -> tuple[str, str, str]:
    """Two texts whose entry ids collide for actor `agent` at time ts (a birthday search: about 5,000 texts):
    (the 6 hex digits, the first text, the second)."""
    seen: dict[str, str] = {}
    n = 0
    while True:
        text = f"decision {n}"
        ident = wal.sha256(f"agent\0{ts}\0{text}".encode())[:6]
        if ident in seen:
            return ident, seen[ident], text
        seen[ident] = text
        n += 1


def test_an_id_collision_is_not_called_an_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids are 24 bits: a line minted under a recorded entry's id (same actor, same ms, another text) is a collision,
    confirmed by recomputing the id from its text; an edit of the recorded line (its text or its reason) is not."""
    ts = "2026-11-29T22:04:26.123Z"
    ident, first, second = _colliding(ts)
    line_a = f"- D-{ident} 2026-11-29 decision: {first} because: r"
    line_b = f"- D-{ident} 2026-11-29 decision: {second} because: r"
    assert minted_as("agent", ts, f"D-{ident}", line_b, first)
    assert not minted_as("agent", ts, f"D-{ident}", line_a.replace(first, first + " edited"), first)
    assert not minted_as("agent", ts, f"D-{ident}", line_a.replace("because: r", "because: other"), first)
    recorded = {"agent": [(line_a, True)]}
    found, unrecorded = check_lines([line_a, line_b], recorded, lambda i, line: minted_as("agent", ts, i, line, first))
    assert found == [] and unrecorded == [2]  # a collision: an unrecorded line, adopted as usual
    found, _ = check_lines([line_a, line_b], recorded)
    assert [(c, n) for c, n, _ in found] == [("latch-changed", 2)]  # without the confirmation: an edit


def test_a_collision_is_told_from_an_edit_through_the_state(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through verify: the recorded entry's record gives the actor and time to recompute the id with."""
    ts = "2026-11-29T22:04:26.123Z"
    monkeypatch.setattr(wal, "now", lambda: ts)
    _, first, second = _colliding(ts)
    state.invariant(first, because="r")
    p = Path(state.path(INV))
    recorded_line = p.read_text().splitlines()[-1]
    collision = recorded_line.replace(first, second)
    p.write_text(p.read_text() + collision + "\n")
    assert [(x.code, x.line) for x in state.verify().problems] == [("unrecorded-line", 9)]
    p.write_text(p.read_text().replace(collision, recorded_line.replace("because: r", "because: edited")))
    assert [(x.code, x.line) for x in state.verify().problems] == [("latch-changed", 9)]


def test_each_entrys_id_is_minted_from_its_own_records_time(state: State) -> None:
    """The id's time is the record's (the clock is read once per entry): a collision can be confirmed from the
    record alone (latches._minted)."""
    p = Path(state.path(INV))
    for i in range(12):
        if i == 5:  # a line added by hand: adopted by the next write, in a record of its own time
            p.write_text(p.read_text() + "- a line added by hand\n")
        (state.invariant if i % 2 else state.reject)(f"entry {i}", because="r")
    every = records(state.root)
    assert [r["ts"] for r in every] == sorted(r["ts"] for r in every)  # no record older than the one before it
    entries = [r for r in every if r["op"] in ("invariant", "reject") and "id" in r["data"]]
    assert len(entries) == 2 + 12
    for r in entries:
        minted = wal.sha256(f"{r['actor']}\0{r['ts']}\0{r['data']['text']}".encode())[:6]
        assert r["data"]["id"][2:] == minted, r


def test_an_exact_copy_is_information_and_the_next_write_removes_it(state: State) -> None:
    p = Path(state.path(INV))
    entry = p.read_text().splitlines()[-1]
    p.write_text(p.read_text() + entry + "\n")
    out = state.verify()
    assert [(x.code, x.line) for x in out.problems] == [("duplicate-line", 8)] and out.ok  # information only
    before = p.read_bytes()
    with state.reading():
        pass
    assert p.read_bytes() == before  # a read never rewrites 10
    done = state.checkpoint(done="x", next="y")
    assert any("removed line 8" in r for r in done.repaired), done.repaired
    assert p.read_text().count(entry) == 1
    assert state.verify().problems == []
    last = records(state.root)[-1]
    from rehydrate.store.latches import binding

    assert last["views"][INV] == binding.lines_of(p.read_bytes()).text()


def test_a_second_actors_legacy_init_shares_the_header(state: State) -> None:
    """Two actors' init records bind the same header lines (a legacy state): no false latch-missing."""
    first = records(state.root)[0]
    bob = wal.seal({**{k: v for k, v in first.items() if k != "h"}, "actor": "bob"})
    (Path(state.root) / "wal" / "bob.jsonl").write_bytes(wal.encode(bob))
    assert [ln for ln, _ in bound_lines(bob)] == [ln for ln, _ in bound_lines(first)]
    assert [p.code for p in state.verify().problems] == []


def test_a_join_record_binds_nothing(state: State) -> None:
    goal = wal.sha256(Path(state.path("00_goal.md")).read_bytes())
    join = wal.seal(
        {
            "v": 1,
            "seq": 1,
            "ts": wal.now(),
            "actor": "bob",
            "op": "join",
            "data": {"goal": goal},
            "views": {"00_goal.md": goal},
            "prev": None,
        }
    )
    (Path(state.root) / "wal" / "bob.jsonl").write_bytes(wal.encode(join))
    assert bound_lines(join) == []
    recorded = state.recorded_lines()  # (the log's scan of a join is the graph's: store/wal/scan.py)
    assert recorded["bob"] == []
    assert check_lines(lines(Path(state.path(INV)).read_bytes()), recorded) == ([], [])


def test_a_missing_line_is_never_matched_with_a_line_another_record_binds() -> None:
    """A recorded line not found verbatim is matched with an edited line (its entry id) only once every actor's
    lines are bound: a colliding id on a line another actor recorded is that actor's, not the missing line's edit."""
    a_line, b_line = "- D-abcdef 2026-01-01 decision: a's because: a", "- D-abcdef 2026-01-01 decision: b's because: b"
    found, unrecorded = check_lines([b_line], {"a": [(a_line, True)], "b": [(b_line, True)]})
    assert [(c, n) for c, n, _ in found] == [("latch-missing", 1)] and unrecorded == []
