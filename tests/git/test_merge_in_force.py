"""Entries superseded and withdrawn on two branches, merged with git both ways: 10_invariants.md keeps every line of
both sides (union merge), `verify` is clean after the next write, and what is in force is the same on both sides,
in the brief, in `ack` and in the guard, whichever side took what out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rehydrate.brief import ack
from rehydrate.harness.guard import watches
from rehydrate.store import layout
from rehydrate.store.latches import lifts


def _id(done: Any) -> str:
    return str(done.json()["id"])


def _base(g: Any, r: Path) -> dict[str, str]:
    """Entries both branches start from: two decisions and two rejected approaches with guards."""
    ids = {
        "d1": _id(g.ok(r, "invariant", "Store events in sqlite", "--because", "one file", "--json")),
        "d2": _id(g.ok(r, "invariant", "Vendor the parser", "--because", "fewer deps", "--json")),
        "r1": _id(g.ok(r, "reject", "Use redis", "--because", "ops cost", "--guard", "*redis*", "--json")),
        "r2": _id(g.ok(r, "reject", "Use mongo", "--because", "no joins", "--guard", "*mongo*", "--json")),
    }
    g.commit(r, "base entries")
    return ids


def _in_force(state: Path) -> set[str]:
    """Every entry id of 10_invariants.md less those out of force (from the file as it is)."""
    data = (state / layout.INVARIANTS).read_bytes()
    out = lifts.out_of_force(data)
    found = {layout.entry_id(line) for line in data.decode().split("\n")}
    return {i for i in found if i is not None and i[0] in "DR" and i not in out}


def _brief(g: Any, r: Path) -> str:
    return str(g.ok(r, "resume", "--budget", "6000").out)


@pytest.mark.parametrize("direction", ["feat into main", "main into feat"])
def test_what_is_in_force_is_the_same_on_both_sides_of_a_merge(git_env: Any, tmp_path: Path, direction: str) -> None:
    g = git_env
    r = g.repo(tmp_path / "repo")
    ids = _base(g, r)
    g.branch(r, "feat")  # (and switches to it)
    g.switch(r, "main")
    # main: redis is lifted by a decision, the vendored parser withdrawn
    lifted = _id(
        g.ok(r, "invariant", "Use redis for the cache", "--because", "ops solved", "--supersedes", ids["r1"], "--json")
    )
    g.ok(r, "withdraw", ids["d2"], "--because", "recorded by mistake")
    g.commit(r, "main takes two out")
    # feat: mongo is replaced by another rejected approach, redis withdrawn too (main lifted it meanwhile)
    g.switch(r, "feat")
    doc = g.ok(
        r,
        "reject",
        "Use any document store",
        "--because",
        "no joins",
        "--supersedes",
        ids["r2"],
        "--guard",
        "*doc*",
        "--json",
    )
    g.ok(r, "withdraw", ids["r1"], "--because", "not ours to decide")
    g.commit(r, "feat takes two out")
    assert g.unmerged(r) == []

    if direction == "feat into main":
        g.switch(r, "main")
        g.merge(r, "feat")
    else:
        g.merge(r, "main")
    assert g.unmerged(r) == []
    state = r / "state"
    g.ok(r, "checkpoint", "--done", "merged", "--next", "carry on")  # the next write joins the lines of work
    verify = g.rh(r, "verify", "--json")
    assert verify.code == 0, verify

    assert _in_force(state) == {ids["d1"], lifted, _id(doc)}

    brief = _brief(g, r)
    for gone in ("Vendor the parser", "ops cost", "Use mongo because"):
        assert gone not in brief, gone
    assert "Use redis for the cache" in brief and "Use any document store" in brief
    out = next(ln for ln in brief.split("\n") if ln.startswith("Not shown, superseded or withdrawn"))
    named = out.split("(no longer in force): ", 1)[1].split(" (", 1)[0].split(", ")
    assert sorted(named) == sorted(ids[k] for k in ("d2", "r1", "r2"))  # redis, out on both sides, named once
    assert ack.rejected_ids((state / layout.INVARIANTS).read_text()) == [_id(doc)]
    guards = [guard for guard, _, _ in watches.rejected(str(state))]
    assert guards == ["*doc*"]


def test_both_merges_agree_line_for_line_on_what_is_in_force(git_env: Any, tmp_path: Path) -> None:
    """main merged into feat and feat into main (two clones of one history): the same entries in force, the same
    brief section, the same watches."""
    g = git_env
    r = g.repo(tmp_path / "repo")
    ids = _base(g, r)
    g.branch(r, "feat")  # (and switches to it)
    g.switch(r, "main")
    g.ok(r, "withdraw", ids["r2"], "--because", "wrong project")
    g.commit(r, "main")
    g.switch(r, "feat")
    g.ok(r, "invariant", "Store events in postgres", "--because", "joins", "--supersedes", ids["d1"])
    g.commit(r, "feat")
    other = tmp_path / "other"
    g.git(tmp_path, "clone", "-q", str(r), str(other))
    g.git(other, "switch", "-q", "main")
    g.merge(other, "origin/feat")  # main + feat
    g.merge(r, "main")  # feat + main
    seen = []
    for where in (r, other):
        assert g.unmerged(where) == []
        g.ok(where, "checkpoint", "--done", "merged", "--next", "go on")
        assert g.rh(where, "verify").code == 0
        section = _brief(g, where).split("## Decisions and rejected approaches", 1)[1].split("\n## ", 1)[0]
        kept = sorted(_in_force(where / "state"))
        seen.append((kept, [w[:2] for w in watches.rejected(str(where / "state"))], _strip_token(section)))
    assert seen[0][0] == seen[1][0] and seen[0][1] == seen[1][1] == [("*redis*", None)]
    assert sorted(line for line in seen[0][2] if line.startswith(">")) == sorted(
        line for line in seen[1][2] if line.startswith(">")
    )
    quoted = [line for line in seen[0][2] if line.startswith(">")]
    assert not any(ids["r2"] in line for line in quoted) and ids["d1"] not in seen[0][0]


def _strip_token(section: str) -> list[str]:
    return [line for line in section.split("\n") if not line.startswith("[")]
