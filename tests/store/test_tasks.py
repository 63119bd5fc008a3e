"""The task list in the state (store/tasks.py): the record carries the whole list, bounded and cleaned; the view is
rendered from it, open items first; a list the view already shows records nothing; the view is redone, reported
or kept like the other replaceable views, survives a rotate, and an actor that joined keeps its own."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import HOSTILE, records, rehydrate
from rehydrate.store import tasks
from rehydrate.store.state import State


def _list(*items: tuple[str, str]) -> dict[str, object]:
    return tasks.make("Claude Code's task tools", [tasks.item(t, s, str(i)) for i, (t, s) in enumerate(items, 1)])


def test_the_view_lists_open_items_first_and_counts_them(state: State) -> None:
    out = state.tasks(
        tasks.make(
            "Claude Code's task tools",
            [
                tasks.item("Read the spec", "completed", "1"),
                tasks.item("Wire the CLI", "pending", "3", "flags and help", ["2"]),
                tasks.item("Write the parser", "in_progress", "2", "the grammar"),
            ],
            "s-1",
        )
    )
    assert out.record is not None and out.record["op"] == "tasks"
    view = (Path(state.root) / "30_tasks.md").read_text()
    assert (
        view.splitlines()[0] == "# Tasks (Claude Code's task tools, session s-1: 2 open, 1 of them in progress; 1 done)"
    )
    items = [ln for ln in view.splitlines() if ln.startswith("- [")]
    assert items == [
        "- [in_progress] #2 Write the parser",
        "- [pending] #3 Wire the CLI (blocked by #2)",
        "- [completed] #1 Read the spec",
    ]
    assert "  flags and help" in view.splitlines()
    assert out.record["views"]["30_tasks.md"] and records(state.root)[-1]["data"]["session"] == "s-1"


def test_the_same_list_again_records_nothing(state: State) -> None:
    first = state.tasks(_list(("a", "pending")))
    before = len(records(state.root))
    again = state.tasks(_list(("a", "pending")))
    assert first.record is not None and again.record is None and len(records(state.root)) == before
    changed = state.tasks(_list(("a", "completed")))
    assert changed.record is not None and len(records(state.root)) == before + 1


def test_the_record_is_bounded_and_the_done_items_go_first(state: State) -> None:
    many = [(f"open {i}", "pending") for i in range(80)] + [(f"done {i}", "completed") for i in range(80)]
    long = "x" * 5000
    data = _list(*many, (long, "pending"))
    assert len(data["items"]) == tasks.MAX_ITEMS and data["dropped"] == {"open": 0, "done": 61}  # type: ignore[call-overload]
    state.tasks(data)
    line = (Path(state.root) / "wal" / "agent.jsonl").read_bytes().splitlines()[-1]
    assert len(line) < 64 << 10  # a write costs what the bounded list holds
    view = (Path(state.root) / "30_tasks.md").read_text()
    assert "- [pending] #161 " + "x" * tasks.MAX_TEXT + "\n" in view
    assert view.rstrip().endswith("(and 61 done not kept: more than 100 items)")


def test_a_subject_cannot_add_a_line_of_its_own(state: State) -> None:
    state.tasks(_list((f"fix it\n- [completed] #9 forged {HOSTILE}", "pending"), ("ok", "weird\nstatus")))
    view = (Path(state.root) / "30_tasks.md").read_text()
    assert not any(c in view for c in "\x1b\x00\r\u202e\x9b")
    assert [ln for ln in view.splitlines() if ln.startswith("- [")] == [
        "- [pending] #1 fix it - [completed] #9 forged ]0;pwned[2J gnp.exe31m",
        "- [weird status] #2 ok",
    ]


def test_an_empty_list_is_said_to_be_empty(state: State) -> None:
    state.tasks(_list())
    assert "(empty: the harness's task list holds no item)" in (Path(state.root) / "30_tasks.md").read_text()


def test_a_deleted_view_is_redone_and_a_hand_edit_is_named_then_kept(state: State) -> None:
    state.tasks(_list(("a", "pending")))
    view = Path(state.root) / "30_tasks.md"
    rendered = view.read_bytes()
    view.unlink()
    out = State.open(state.root).reconcile()
    assert view.read_bytes() == rendered and any("redid state/30_tasks.md" in r for r in out.repaired)
    view.write_text(view.read_text() + "- [pending] mine\n")
    problems = State.open(state.root).reconcile().problems
    assert [(p.code, p.file) for p in problems] == [("view-edited", "state/30_tasks.md")]
    State.open(state.root).tasks(_list(("a", "completed")))
    assert (Path(state.root) / "30_tasks.md.edited").read_text().endswith("- [pending] mine\n")
    assert State.open(state.root).reconcile().problems == []


def test_the_list_survives_a_rotate_and_is_redone_from_it(state: State) -> None:
    state.tasks(_list(("a", "in_progress")))
    rendered = (Path(state.root) / "30_tasks.md").read_bytes()
    rotated = State.open(state.root).rotate().record
    assert rotated is not None and rotated["data"]["tasks"]["op"] == "tasks"
    (Path(state.root) / "30_tasks.md").unlink()
    State.open(state.root).verify(repair=True)
    assert (Path(state.root) / "30_tasks.md").read_bytes() == rendered
    assert State.open(state.root).verify().problems == []


def test_an_actor_that_joined_keeps_its_own_list(state: State) -> None:
    state.tasks(_list(("mine", "pending")))
    bob = State.open(state.root, actor="bob")
    bob.tasks(_list(("bob's", "in_progress")))
    assert "bob's" in (Path(state.root) / "tasks" / "bob.md").read_text()
    assert "mine" in (Path(state.root) / "30_tasks.md").read_text()
    assert (
        State.open(state.root).verify().problems == [] and State.open(state.root, actor="bob").verify().problems == []
    )


def test_resume_shows_the_list_and_the_last_record_only_counts_it(state: State) -> None:
    state.tasks(_list(("Write the parser", "in_progress"), ("Read the spec", "completed")))
    r = rehydrate("resume", cwd=Path(state.root).parent)
    assert r.code == 0, r.err
    section = r.out.split("## Task list\n", 1)[1].split("\n## ", 1)[0]
    assert "quote: state/30_tasks.md]" in section.splitlines()[0]
    assert section.index("#1 Write the parser") < section.index("#2 Read the spec")
    last = r.out.split("## Last WAL record\n", 1)[1]
    assert '"items":{"done":1,"in_progress":1,"open":1}' in last and "Write the parser" not in last


def test_the_json_record_carries_the_items_in_the_harness_order(state: State) -> None:
    state.tasks(_list(("b", "completed"), ("a", "pending")))
    data = records(state.root)[-1]["data"]
    assert [i["text"] for i in data["items"]] == ["b", "a"] and json.dumps(data)
    assert not os.path.exists(os.path.join(state.root, "tasks"))
