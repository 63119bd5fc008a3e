"""The guard (harness/guard/before.py): an edit or command on what a rejected approach guards gets the configured
decision (ask, deny or warn); and a rejected approach can watch what is written, not only where: `reject --contains
TEXT`. Real subprocesses, as the harnesses run the hook."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import claude_event, hook_answer, rehydrate, run_hook
from rehydrate.harness import hook
from rehydrate.harness.guard import watches
from rehydrate.store import layout
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal


def answered(harness: str, event: dict[str, object], cwd: Path) -> dict[str, object] | None:
    """The hook's answer (None: it said nothing), after it exited 0."""
    code, answer, err = hook_answer(harness, event, cwd)
    assert code == 0, err
    return answer


def tool(repo: Path, name: str, **tool_input: object) -> dict[str, object]:
    return {"session_id": "s1", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": name,
            "tool_input": tool_input}  # fmt: skip


def asked(answer: dict[str, object] | None) -> str:
    """The permission decision of a Claude Code answer, or '' when the hook said nothing."""
    if answer is None:
        return ""
    specific = answer["hookSpecificOutput"]
    assert isinstance(specific, dict)
    return str(specific.get("permissionDecision", ""))


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Edit", {"file_path": "{repo}/db/schema.sql", "old_string": "a", "new_string": "b"}),
        ("Write", {"file_path": "db/schema.sql", "content": "x"}),
        ("Bash", {"command": "sed -i s/a/b/ db/schema.sql"}),
    ],
)
def test_a_guarded_edit_gets_the_configured_decision(repo: Path, state: State, tool: str, tool_input: dict) -> None:  # type: ignore[type-arg]
    tool_input = {k: v.replace("{repo}", str(repo)) for k, v in tool_input.items()}
    event = claude_event(repo, "PreToolUse", tool_name=tool, tool_input=tool_input)
    for config, decision in ((None, "ask"), ({"guard": "deny"}, "deny"), ({"guard": "bogus"}, "ask")):
        if config is not None:
            Path(state.path("config.json")).write_text(json.dumps(config))
        code, out, _ = run_hook("claude", event, repo)
        answer = json.loads(out)["hookSpecificOutput"]
        assert code == 0 and answer["hookEventName"] == "PreToolUse" and answer["permissionDecision"] == decision
        assert (
            "rejected: Edit db/schema.sql directly because: every schema change needs a migration"
            in answer["permissionDecisionReason"]
        )
    Path(state.path("config.json")).write_text('{"guard": "warn"}')
    code, out, err = run_hook("claude", event, repo)
    answer = json.loads(out)
    assert code == 0 and err == "" and "permissionDecision" not in out and "decision" not in answer
    warning = answer["systemMessage"]  # shown to the user, and the same text given to the model
    assert answer["hookSpecificOutput"] == {"hookEventName": "PreToolUse", "additionalContext": warning}
    assert "rejected: Edit db/schema.sql directly because: every schema change needs a migration" in warning
    assert "A rejected approach stays rejected" in warning


def test_an_unguarded_edit_says_nothing(repo: Path, state: State) -> None:
    for tool, tool_input in (
        ("Edit", {"file_path": str(repo / "app.py")}),
        ("Bash", {"command": "pytest -q"}),
        ("Read", {"file_path": str(repo / "db" / "schema.sql")}),
    ):
        assert run_hook("claude", claude_event(repo, "PreToolUse", tool_name=tool, tool_input=tool_input), repo) == (
            0,
            "",
            "",
        )


# ------------------------------------------------------------------------------------------------ contains


@pytest.fixture
def eval_state(repo: Path) -> State:
    st, _ = State.init(repo / "state", "A calculator")
    st.reject("Evaluate input with eval()", because="it runs arbitrary code", guard="calc/*.py", contains="eval(")
    st.reject("Delete the build cache", because="it takes an hour to rebuild", contains="rm -rf build")
    return st


def test_the_guard_and_contains_are_on_the_line_and_in_the_record(eval_state: State) -> None:
    text = (Path(eval_state.root) / layout.INVARIANTS).read_text()
    line = next(ln for ln in text.splitlines() if "eval()" in ln)
    assert line.endswith(" guard: calc/*.py contains: eval(")
    assert layout.entry_guard(line) == ("calc/*.py", "eval(")
    assert watches.rejected(eval_state.root) == [
        ("calc/*.py", "eval(", line),
        (None, "rm -rf build", next(ln for ln in text.splitlines() if "build cache" in ln)),
    ]


def test_an_edit_in_the_guarded_folder_without_the_text_goes_through(repo: Path, eval_state: State) -> None:
    """The README's own example: rejecting eval() must not ask before every edit in calc/."""
    answer = answered("claude", tool(repo, "Write", file_path=str(repo / "calc/ops.py"), content="x = 1 + 2\n"), repo)
    assert answer is None


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("Write", {"file_path": "calc/ops.py", "content": "y = eval(text)\n"}),
        ("Edit", {"file_path": "calc/ops.py", "old_string": "a", "new_string": "return eval(a)"}),
        ("MultiEdit", {"file_path": "calc/ops.py", "edits": [{"old_string": "a", "new_string": "b"},
                                                            {"old_string": "c", "new_string": "eval(c)"}]}),
    ],
)  # fmt: skip
def test_the_text_in_what_is_written_is_caught(
    repo: Path, eval_state: State, name: str, tool_input: dict[str, object]
) -> None:
    tool_input = {**tool_input, "file_path": str(repo / str(tool_input["file_path"]))}
    answer = answered("claude", tool(repo, name, **tool_input), repo)
    assert asked(answer) == "ask"
    assert answer is not None and "Evaluate input with eval()" in json.dumps(answer)


def test_the_text_outside_the_guarded_folder_goes_through(repo: Path, eval_state: State) -> None:
    answer = answered("claude", tool(repo, "Write", file_path=str(repo / "docs/x.py"), content="eval(x)"), repo)
    assert answer is None


def test_contains_alone_watches_every_write_and_command(repo: Path, eval_state: State) -> None:
    answer = answered("claude", tool(repo, "Bash", command="cd out && rm -rf build"), repo)
    assert asked(answer) == "ask" and "Delete the build cache" in json.dumps(answer)
    assert answered("claude", tool(repo, "Bash", command="rm -rf dist"), repo) is None
    answer = answered("claude", tool(repo, "Write", file_path=str(repo / "clean.sh"), content="rm -rf build\n"), repo)
    assert asked(answer) == "ask"


def test_codex_patch_lines_and_gemini_content(repo: Path, eval_state: State) -> None:
    patch = "*** Begin Patch\n*** Update File: calc/ops.py\n@@\n-x = a\n+x = eval(a)\n*** End Patch\n"
    answer = answered("codex", tool(repo, "apply_patch", command=patch), repo)
    assert answer is not None and "Evaluate input with eval()" in json.dumps(answer)
    removed = "*** Begin Patch\n*** Update File: calc/ops.py\n@@\n-x = eval(a)\n+x = a\n*** End Patch\n"
    assert answered("codex", tool(repo, "apply_patch", command=removed), repo) is None  # taking eval() out is fine
    event = {**tool(repo, "write_file", file_path="calc/ops.py", content="eval(a)"), "hook_event_name": "BeforeTool"}
    answer = answered("gemini", event, repo)
    assert answer is not None and "Evaluate input with eval()" in json.dumps(answer)


def test_a_cut_input_fails_closed_when_a_contains_is_watched(repo: Path, eval_state: State) -> None:
    """The path is readable but the content was cut: whether it holds the text cannot be ruled out."""
    event = json.dumps(tool(repo, "Write", file_path=str(repo / "calc/ops.py"), content="x" * 5000))
    answer = hook.run("claude", event[:2000].encode(), size=len(event), ended=False)
    assert json.loads(answer.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_text_that_would_fake_a_guard_is_refused(repo: Path, eval_state: State) -> None:
    r = rehydrate("reject", "Use X", "--because", "see guard: *", cwd=repo)
    assert r.code == 2 and "guard:" in r.err
    r = rehydrate("reject", "Use X contains: y", "--because", "no", cwd=repo)
    assert r.code == 2 and "contains:" in r.err
    r = rehydrate("reject", "Use X", "--because", "no", "--guard", "a contains: b", cwd=repo)
    assert r.code == 2
    r = rehydrate("reject", "Use eval", "--because", "unsafe", "--contains", "eval(", "--json", cwd=repo)
    assert r.code == 0 and json.loads(r.out)["line"].endswith(" contains: eval(")


# ------------------------------------------------------------------------------------- where a watch comes from


def _watches(state: State) -> list[tuple[str | None, str | None]]:
    return [(g, c) for g, c, _ in watches.rejected(state.root)]


def test_a_recorded_watch_edited_by_hand_keeps_its_recorded_value(repo: Path, state: State) -> None:
    """10_invariants.md arrives by git pull: a watch widened or narrowed there by hand does not change what the
    record says; the recorded watch is the one the guard applies."""
    path = Path(state.path(layout.INVARIANTS))  # the fixture's rejected approach guards db/schema.sql
    path.write_text(path.read_text().replace("guard: db/schema.sql", "guard: nothing/ever"))
    assert _watches(state) == [("db/schema.sql", None)]
    edit = tool(repo, "Edit", file_path="db/schema.sql", old_string="a", new_string="b")
    assert asked(answered("claude", edit, repo)) == "ask"
    other = tool(repo, "Edit", file_path="nothing/ever", old_string="a", new_string="b")
    assert asked(answered("claude", other, repo)) == ""


def test_a_rejected_line_added_by_hand_watches_what_it_shows(repo: Path, state: State) -> None:
    """No record carries it yet (the next write adopts it): the guard fails closed, the line's watch counts."""
    with open(state.path(layout.INVARIANTS), "a") as f:
        f.write("- R-abcdef 2026-11-30 rejected: Touch a.txt because: planted guard: a.txt\n")
    assert _watches(state) == [("db/schema.sql", None), ("a.txt", None)]
    assert asked(answered("claude", tool(repo, "Write", file_path="a.txt", content="x"), repo)) == "ask"


def test_the_records_are_looked_for_only_as_far_as_the_lookback(
    repo: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cost follows what is shown: on every tool call the guard reads at most LOOKBACK bytes of the logs. A
    record further back is not looked for, and the line's own watch counts (fail closed)."""
    path = Path(state.path(layout.INVARIANTS))  # the fixture's rejected approach guards db/schema.sql
    path.write_text(path.read_text().replace("guard: db/schema.sql", "guard: db/*"))
    for i in range(200):
        state.checkpoint(done=f"step {i}", next=f"step {i + 1}")
    size = Path(state.wal_path).stat().st_size
    reads: list[int] = []  # the bytes of each read of the log
    real = os.pread

    def counting(fd: int, n: int, offset: int) -> bytes:
        data = real(fd, n, offset)
        reads.append(len(data))
        return data

    decoded: list[int] = []
    real_decode = wal.decode

    def decoding(line: bytes) -> wal.Record:
        decoded.append(1)
        return real_decode(line)

    monkeypatch.setattr(os, "pread", counting)
    monkeypatch.setattr(wal, "decode", decoding)
    assert _watches(state) == [("db/schema.sql", None)]  # the whole log is within the default reach
    assert sum(reads) >= size and len(decoded) == 1  # of 204 records, only the one that names the id is decoded
    monkeypatch.setattr(watches, "LOOKBACK", size // 4)
    reads.clear()
    assert _watches(state) == [("db/*", None)]  # beyond reach: what the line shows
    assert max(reads) <= size // 4 and sum(reads) < size // 2, (reads, size)  # the reach, and 10_invariants.md
