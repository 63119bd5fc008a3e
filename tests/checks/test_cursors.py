"""cursors (checks/cursors.py): no pipeline registered is nothing to look at, and says where it looked; a pipeline
the brief could not look at degrades the brief."""

from __future__ import annotations

from pathlib import Path

from rehydrate import brief, checks
from rehydrate.checks import Context
from rehydrate.checks.cursors import CursorsCheck
from rehydrate.store.state import State


def test_a_pipeline_the_brief_could_not_look_at_degrades_the_brief(repo: Path, state: State) -> None:
    (repo / "state" / "pipelines.json").write_text(
        '{"pass B": {"output": "/etc/out.jsonl", "progress": "/etc/progress.json", "key": "index"}}'
    )
    result = brief.resume(state)
    assert result.confidence == "degraded (cursors)", result.text


def test_no_pipeline_registered_is_nothing_to_look_at_and_says_where_it_looked(repo: Path, state: State) -> None:
    found = CursorsCheck().run(Context(state, state.reconcile()))
    assert [(f.status, f.message) for f in found] == [("n/a", "no pipeline registered (state/pipelines.json absent)")]
    assert checks.confidence(found) == "recovered"
    assert CursorsCheck().run(Context(None, None, error="no state")) == []  # identity reports a state that did not load
