"""brief/recover.py: the recovery ledger as a library call (what `rehydrate recover` prints and the MCP server's
`recover` tool returns): read-only, a state that does not load said in the caller's words."""

from __future__ import annotations

from pathlib import Path

from conftest import git
from rehydrate.brief.recover import recover
from rehydrate.errors import RehydrateError
from rehydrate.store.state import State


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_ledger_is_computed_and_nothing_is_written(repo: Path, state: State) -> None:
    before = _tree(repo / "state"), _tree(repo / ".git" / "rehydrate")
    got = recover(state.root, None)
    assert got.state is not None and got.error is None and got.summed is not None
    assert got.recovered and got.summed.confidence == "recovered"
    assert [f.check for f in got.summed.findings][:2] == ["identity", "state"]
    assert (_tree(repo / "state"), _tree(repo / ".git" / "rehydrate")) == before
    (repo / "app.py").write_text("edited\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "Work no checkpoint recorded")
    assert not recover(state.root, None).recovered


def test_a_state_that_does_not_load_asks_to_fix_it_first_in_the_caller_s_words(repo: Path, state: State) -> None:
    got = recover(state.root, "other")  # an actor without a log
    assert got.state is None and isinstance(got.error, RehydrateError) and got.summed is not None
    assert got.summed.next is not None and got.summed.next.startswith("fix the state first: actor 'other'")
    worded = recover(state.root, "other", words=lambda e: ("--actor: " + e.message, None))
    assert worded.summed is not None and worded.summed.next == "fix the state first: --actor: " + got.error.message
