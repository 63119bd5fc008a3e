"""live-state: git now against the checkpoint, one finding per aspect, on real repositories (tests/fakes/gitrepos.py).
Every ok or n/a finding names where it looked."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.fakes import gh as fakes_gh
from tests.fakes import gitrepos
from tests.fakes.gitrepos import commit, git

from conftest import paths_touched
from rehydrate.checks import Context, Finding, confidence, run_all
from rehydrate.checks.git import probe as gitnow
from rehydrate.checks.livestate import LiveStateCheck
from rehydrate.store.git import info as gitinfo
from rehydrate.store.wal.since import Since


def _state(repo: Path) -> Path:
    folder = repo / "state"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "00_goal.md").write_text("goal\n")
    return folder


NO_GH = "gh not installed (looked for gh on PATH): pull request and CI not looked at"


def _run(folder: Path, ckpt: dict[str, Any] | None, seq: int | None = 42, **env: str) -> list[Finding]:
    """live-state in hook scope, on a PATH of one folder holding git and no gh (unless env gives a PATH)."""
    since = Since()
    since.git, since.seq = ckpt, seq
    view: Any = SimpleNamespace(root=str(folder), actor="agent")
    path = env.pop("PATH", None) or fakes_gh.bin_path(folder.parent.parent / "nogh")
    context = Context(view, None, since=since, env={**os.environ, **env, "PATH": path})
    return run_all(context, [LiveStateCheck()])


def _lines(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.status, f.said()) for f in findings]


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return gitrepos.remote_pair(tmp_path)[1]


@pytest.fixture
def ckpt(agent: Path) -> dict[str, Any]:
    return gitinfo.snapshot(str(_state(agent)))


def test_nothing_since_the_checkpoint_is_ok_and_says_where_it_looked(agent: Path, ckpt: dict[str, Any]) -> None:
    found = _run(agent / "state", ckpt)
    assert _lines(found) == [
        ("ok", f"HEAD {ckpt['head'][:7]} on feat is checkpoint 42's (git status, git log {ckpt['head'][:7]}..HEAD)"),
        ("ok", "feat is 0 ahead of origin/feat and 0 behind (git status --branch, as of the clone: never fetched)"),
        ("n/a", NO_GH),
    ]
    assert confidence(found) == "recovered"


def test_own_commits_since_are_named_and_read_first(agent: Path, ckpt: dict[str, Any]) -> None:
    for i in range(7):
        commit(agent, f"f{i}.py", "x\n", f"Step {i}")
    head, *rest = _run(agent / "state", ckpt)
    assert head.status == "degraded" and head.said().startswith("7 commit(s) on feat since checkpoint 42: ")
    assert '"Step 6"' in head.said() and '"Step 2"' in head.said() and '"Step 1"' not in head.said()
    assert head.said().endswith("and 2 more")
    assert (
        head.said_next()
        == f"read the 7 commit(s) since checkpoint 42 (git log {ckpt['head'][:7]}..HEAD) before its next step"
    )
    assert [f.status for f in rest] == ["ok", "n/a"]  # 7 ahead of the upstream: not behind; no gh


def test_a_rebase_quotes_the_reflog_and_asks_for_a_diff(agent: Path, ckpt: dict[str, Any]) -> None:
    gitrepos.rebase_head(agent)
    head = _run(agent / "state", ckpt)[0]
    assert head.status == "degraded" and "is not a descendant of checkpoint 42's" in head.said()
    assert '(reflog: "rebase' in head.said()
    assert head.said_next() == f"check that checkpoint 42's work survived: git diff {ckpt['head'][:7]} HEAD"


def test_a_branch_switch(agent: Path, ckpt: dict[str, Any]) -> None:
    gitrepos.switch(agent, "main")
    head = _run(agent / "state", ckpt)[0]
    assert head.status == "degraded"
    assert 'checkpoint 42 was on feat (reflog: "checkout: moving from feat to main")' in head.said()
    assert head.said_next() == "git switch feat, or confirm the switch was meant"


def test_dirty_files_the_checkpoint_did_not_record(agent: Path) -> None:
    (agent / "old.py").write_text("dirty before\n")
    ckpt = gitinfo.snapshot(str(_state(agent)))
    (agent / "notes.md").write_text("x\n")
    (agent / "app.py").write_text("x\n")
    (agent / "state" / "20_handoff.md").write_text("the state's own files are not work\n")
    found = _run(agent / "state", ckpt)
    dirty = [f for f in found if "changed now" in f.said()]
    assert len(dirty) == 1 and dirty[0].status == "degraded"
    assert dirty[0].message == "2 file(s) changed now that checkpoint 42 did not record: app.py, notes.md (git status)"
    assert dirty[0].next_action is not None and "git diff -- app.py notes.md" in dirty[0].next_action


def test_behind_its_upstream_after_a_fetch(agent: Path, ckpt: dict[str, Any], tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", "-b", "feat", str(tmp_path / "origin.git"), str(other))
    commit(other, "y.py", "y\n", "From another clone")
    git(other, "push", "-q", "origin", "feat")
    git(agent, "fetch", "-q")
    up = _run(agent / "state", ckpt)[-2]
    assert up.status == "degraded" and up.said().startswith(
        "feat is 0 ahead of origin/feat and 1 behind (git status --branch, as of the last fetch, "
    )
    assert up.said_next() == "git pull: origin/feat has 1 commit(s) HEAD lacks"


def test_no_upstream_is_not_applicable(agent: Path, ckpt: dict[str, Any]) -> None:
    git(agent, "branch", "-q", "--unset-upstream")
    up = _run(agent / "state", ckpt)[-2]
    assert (up.status, up.said()) == (
        "n/a",
        "feat has no upstream (git status --branch): ahead or behind not looked at",
    )


def test_an_unknown_checkpoint_commit(agent: Path) -> None:
    head = _run(_state(agent), {"head": "ab" * 20, "branch": "feat", "dirty": []})[0]
    assert head.status == "degraded" and "checkpoint 42's commit ababab" in head.said()


def test_not_a_repository_then_or_now(tmp_path: Path) -> None:
    folder = _state(tmp_path / "plain")
    found = _run(folder, None, GIT_CEILING_DIRECTORIES=str(tmp_path))
    assert _lines(found) == [("n/a", f"not a git repository, at checkpoint 42 or now (git status in {folder})")]


def test_no_checkpoint_known_gives_no_finding_and_starts_no_git(tmp_path: Path) -> None:
    folder = _state(tmp_path / "plain")
    assert _run(folder, None, seq=None) == []
    view: Any = SimpleNamespace(root=str(folder), actor="agent")
    context = Context(view, None)
    LiveStateCheck().start(context)
    assert context.shared == {}


def test_a_repository_that_is_gone(tmp_path: Path) -> None:
    folder = _state(tmp_path / "plain")
    found = _run(folder, {"head": "ab" * 20, "branch": "feat"}, GIT_CEILING_DIRECTORIES=str(tmp_path))
    assert [f.status for f in found] == ["skipped"] and "checkpoint 42 recorded HEAD ababab" in found[0].message


def test_a_hanging_git_is_skipped_not_clean(
    agent: Path, ckpt: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f"#!{sys.executable}\nimport time\ntime.sleep(3600)\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setattr(gitnow, "HOOK_DEADLINE", 0.5)
    found = _run(agent / "state", ckpt, PATH=str(bin_dir))
    assert _lines(found) == [
        (
            "skipped",
            "git status did not answer within 0.5 s: HEAD, branch and changed files since checkpoint 42 not looked at",
        )
    ]
    assert confidence(found) == "degraded (live-state)"


def test_the_probe_is_started_once_and_shared(agent: Path, ckpt: dict[str, Any]) -> None:
    since = Since()
    since.git, since.seq = ckpt, 42
    view: Any = SimpleNamespace(root=str(agent / "state"), actor="agent")
    context = Context(view, None, since=since)
    check = LiveStateCheck()
    check.start(context)
    probe = context.shared["gitnow"]
    check.run(context)
    assert context.shared["gitnow"] is probe and probe.result() is probe.result()


def test_a_dirty_path_is_one_shell_word_in_the_suggested_diff(agent: Path, ckpt: dict[str, Any]) -> None:
    (agent / "a b.py").write_text("x\n")
    (agent / "it's.py").write_text("x\n")
    dirty = next(f for f in _run(agent / "state", ckpt) if "changed now" in f.said())
    assert dirty.said_next() == (
        "look at git status and git diff -- 'a b.py' 'it'\\''s.py': no checkpoint recorded them"
    )


# ------------------------------------------------------------------ the content of the files dirty at the checkpoint


def _ledger(folder: Path, ckpt: dict[str, Any], step: str | None = "wire the CLI") -> tuple[list[Finding], Any]:
    """live-state on a checkpoint whose next step is `step`, and the ledger it gives."""
    from rehydrate.checks import ledger

    since = Since()
    since.git, since.seq, since.next = ckpt, 42, step
    view: Any = SimpleNamespace(root=str(folder), actor="agent")
    path = fakes_gh.bin_path(folder.parent.parent / "nogh")
    found = run_all(Context(view, None, since=since, env={**os.environ, "PATH": path}), [LiveStateCheck()])
    return found, ledger.summarize(found, checkpoint_next=step, goal_present=True)


def _content(found: list[Finding]) -> list[Finding]:
    return [f for f in found if "dirty at checkpoint 42" in f.said()]


def _dirty_at_checkpoint(agent: Path) -> dict[str, Any]:
    """A checkpoint with two tracked files modified (an untracked folder git shows whole, `src/`: no file in it is
    bound by content)."""
    commit(agent, "src/x.py", "", "Empty module")
    (agent / "src" / "x.py").write_text("def step_one(): ...\n")  # the work of the step the checkpoint records
    (agent / "calc" / "parser.py").write_text("def parse(): return 1\n")
    return gitinfo.snapshot(str(_state(agent)))


def test_a_file_dirty_at_the_checkpoint_and_edited_after_it_is_named(agent: Path) -> None:
    """The agent goes on editing a file that was already dirty: the dirty paths are the same, its content is not,
    and the next safe action is to look at it, not to go on with (or redo) the checkpoint's next step."""
    ckpt = _dirty_at_checkpoint(agent)
    (agent / "src" / "x.py").write_text("def step_one(): ...\ndef step_two(): ...\n")
    found, ledger = _ledger(agent / "state", ckpt)
    assert not [f for f in found if "changed now" in f.said()]  # no new dirty path: only the content tells
    assert _lines(_content(found)) == [
        (
            "degraded",
            "1 file(s) dirty at checkpoint 42 changed since it: src/x.py (git blob ids against checkpoint 42's)",
        )
    ]
    nxt = (
        "src/x.py changed after checkpoint 42: check them (git diff -- src/x.py) before redoing checkpoint 42's next"
        ' step, "wire the CLI"'
    )
    assert _content(found)[0].said_next() == nxt  # the step quoted, named by reference in the ledger
    assert ledger.said(ledger.next) == nxt and ledger.confidence == "degraded (live-state)"
    _, without_step = _ledger(agent / "state", ckpt, step=None)
    assert (
        without_step.next == "src/x.py changed after checkpoint 42: check them (git diff -- src/x.py) before going on"
    )


def test_dirty_files_unchanged_since_the_checkpoint_stay_ok(agent: Path) -> None:
    ckpt = _dirty_at_checkpoint(agent)
    os.utime(agent / "src" / "x.py", (1, 1))  # the time changes nothing: the content is what is bound
    found, ledger = _ledger(agent / "state", ckpt)
    assert _lines(_content(found)) == [
        (
            "ok",
            "2 file(s) dirty at checkpoint 42 hold the content it recorded: calc/parser.py, src/x.py "
            "(git blob ids against checkpoint 42's)",
        )
    ]
    assert ledger.confidence == "recovered" and ledger.next == "wire the CLI"


def test_a_dirty_file_deleted_after_the_checkpoint_and_one_deleted_at_it_that_is_back(agent: Path) -> None:
    (agent / "README.md").unlink()
    ckpt = _dirty_at_checkpoint(agent)
    assert ckpt["dirty_blobs"]["README.md"] == gitinfo.DELETED
    (agent / "src" / "x.py").unlink()
    (agent / "README.md").write_text("calc, again\n")
    found = _content(_ledger(agent / "state", ckpt)[0])
    assert _lines(found) == [
        (
            "degraded",
            "2 file(s) dirty at checkpoint 42 changed since it: README.md (recreated), src/x.py (deleted) "
            "(git blob ids against checkpoint 42's)",
        )
    ]
    assert found[0].next_action is not None and "(git diff -- README.md src/x.py)" in found[0].next_action
    (agent / "README.md").unlink()  # deleted at the checkpoint, deleted now: the same
    (agent / "src" / "x.py").write_text("def step_one(): ...\n")
    assert [f.status for f in _content(_ledger(agent / "state", ckpt)[0])] == ["ok"]


def test_the_checkpoint_s_work_committed_as_it_was_is_ok_and_edited_before_the_commit_is_named(agent: Path) -> None:
    """A commit since that holds only the files the checkpoint recorded passes for its own work (git log); their
    content says whether the work went on before the commit."""
    ckpt = _dirty_at_checkpoint(agent)
    git(agent, "add", "src/x.py", "calc/parser.py")
    git(agent, "commit", "-qm", "Step one")
    found = _ledger(agent / "state", ckpt)[0]
    assert found[0].status == "ok"
    assert "each holding only state/, rehydrate's own set-up and the files" in found[0].message
    assert [f.status for f in _content(found)] == ["ok"]
    commit(agent, "src/x.py", "def step_one(): ...\ndef step_two(): ...\n", "Step two, too")
    found = _ledger(agent / "state", ckpt)[0]
    assert found[0].status == "ok"  # the commits alone still look like the checkpoint's own work
    assert _lines(_content(found)) == [
        (
            "degraded",
            "1 file(s) dirty at checkpoint 42 changed since it: src/x.py (git blob ids against checkpoint 42's)",
        )
    ]


def test_an_old_checkpoint_without_blob_ids_works_as_before(agent: Path) -> None:
    ckpt = _dirty_at_checkpoint(agent)
    old = {k: v for k, v in ckpt.items() if k != "dirty_blobs"}  # a record written before the blob ids
    (agent / "src" / "x.py").write_text("edited after\n")
    assert [f.status for f in _content(_ledger(agent / "state", ckpt)[0])] == ["degraded"]
    found, ledger = _ledger(agent / "state", old)
    assert _lines(found) == [
        ("ok", f"HEAD {old['head'][:7]} on feat is checkpoint 42's (git status, git log {old['head'][:7]}..HEAD)"),
        ("ok", "feat is 1 ahead of origin/feat and 0 behind (git status --branch, as of the clone: never fetched)"),
        ("n/a", NO_GH),
    ]
    assert ledger.next == "wire the CLI"
    for odd in ({"src/x.py": "not a blob id"}, {"src/x.py": {"size": "1"}}, ["src/x.py"], {"src/x.py": None}):
        assert _content(_ledger(agent / "state", {**old, "dirty_blobs": odd})[0]) == []  # nothing to compare


def test_the_count_bound_compares_the_first_paths_only(agent: Path) -> None:
    for i in range(gitinfo.MAX_BLOBS + 5):
        (agent / f"f{i:03}.txt").write_text(f"{i}\n")
    ckpt = gitinfo.snapshot(str(_state(agent)))
    assert len(ckpt["dirty_blobs"]) == gitinfo.MAX_BLOBS and "f204.txt" not in ckpt["dirty_blobs"]
    (agent / "f000.txt").write_text("edited\n")
    (agent / "f204.txt").write_text("edited\n")  # past the bound: not bound, so not compared
    found = _content(_ledger(agent / "state", ckpt)[0])
    assert _lines(found) == [
        (
            "degraded",
            "1 file(s) dirty at checkpoint 42 changed since it: f000.txt (git blob ids against checkpoint 42's)",
        )
    ]
    many = {**ckpt, "dirty_blobs": {f"g{i:04}.txt": "0" * 40 for i in range(5000)}}  # a forged record: no more read
    for i in range(gitinfo.MAX_BLOBS + 1):
        (agent / f"g{i:04}.txt").write_text("x\n")
    found = _content(_ledger(agent / "state", many)[0])
    assert found[0].message.startswith(f"{gitinfo.MAX_BLOBS} file(s) dirty at checkpoint 42 changed since it: ")


def test_a_huge_file_is_bound_by_its_size(agent: Path) -> None:
    """Over MAX_BLOB_BYTES a file is not read: its size is recorded, a new size is a change, and the same size is
    ok, saying that the content was not compared."""
    huge = agent / "data.bin"
    huge.write_bytes(b"a" * (gitinfo.MAX_BLOB_BYTES + 1))
    ckpt = gitinfo.snapshot(str(_state(agent)))
    assert ckpt["dirty_blobs"] == {"data.bin": {"size": gitinfo.MAX_BLOB_BYTES + 1}}
    huge.write_bytes(b"b" * (gitinfo.MAX_BLOB_BYTES + 1))
    assert _lines(_content(_ledger(agent / "state", ckpt)[0])) == [
        (
            "ok",
            "1 file(s) dirty at checkpoint 42 have the size it recorded, content not hashed (over 4 MiB, or past "
            "32 MiB in all): data.bin",
        )
    ]
    huge.write_bytes(b"b" * (gitinfo.MAX_BLOB_BYTES + 2))
    found = _content(_ledger(agent / "state", ckpt)[0])
    assert [f.status for f in found] == ["degraded"] and "data.bin (another size)" in found[0].message
    small = {**ckpt, "dirty_blobs": {"data.bin": "0" * 40}}  # hashed then: no larger than the bound
    assert "data.bin (now larger than 4 MiB)" in _content(_ledger(agent / "state", small)[0])[0].message


def test_recorded_paths_that_are_not_safe_are_never_read(
    agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record is untrusted (it arrives by git pull): a path that is absolute, has `..` or leads through a linked
    folder out of the repository is never looked at, not even by an lstat; a plain one still is."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (agent / "linked").symlink_to(outside)
    ckpt = _dirty_at_checkpoint(agent)
    wrong = "0" * 40  # were any of them read, its content would differ from this and be named
    forged = {str(outside / "secret.txt"): wrong, "../outside/secret.txt": wrong, "linked/secret.txt": wrong}
    ckpt["dirty_blobs"].update(forged)
    (agent / "src" / "x.py").write_text("edited after\n")
    touched = paths_touched(monkeypatch)
    found = _content(_ledger(agent / "state", ckpt)[0])
    monkeypatch.undo()
    assert _lines(found) == [
        (
            "degraded",
            "1 file(s) dirty at checkpoint 42 changed since it: src/x.py (git blob ids against checkpoint 42's)",
        )
    ]
    assert not [p for p in touched if p.startswith(str(outside))], touched


def test_after_a_checkpoint_and_more_edits_recover_names_the_file_instead_of_the_next_step(repo: Path) -> None:
    """The whole path, through the CLI: the checkpoint records the blob ids, `recover` compares them."""
    from conftest import rehydrate

    assert rehydrate("init", "--goal", "Ship the parser").code == 0
    (repo / "app.py").write_text("print('step one')\n")
    assert rehydrate("checkpoint", "--done", "step one in app.py", "--next", "go on with the next step").code == 0
    r = rehydrate("recover", "--json")
    assert r.code == 0 and json.loads(r.out)["next"] == "go on with the next step"
    (repo / "app.py").write_text("print('step one')\nprint('step two')\n")
    r = rehydrate("recover", "--json")
    out = json.loads(r.out)
    assert r.code == 1 and out["confidence"] == "degraded" and "live-state" in out["degraded"]
    assert out["next"].startswith("app.py changed after checkpoint 2: check them (git diff -- app.py) before redoing")
