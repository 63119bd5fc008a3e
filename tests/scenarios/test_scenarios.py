"""The recovery scenario corpus (plan 3.2), the scenarios that need no transcript: each builds a real project with
its state through the real CLI, runs `rehydrate recover --json`, then the SessionStart hook of claude, codex and
gemini, and checks recover's ledger against what the scenario expects and each brief's ledger against recover's.

Numbers are the plan's. The transcript scenarios (2-5, 16, 24-27, 29, with 17's, 19's and 28's lines) are in
test_transcript_scenarios.py, the gh scenarios (7, 19-22) in test_gh_scenarios.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from fakes import gh, gitrepos
from scenarios.build import (
    HARNESSES,
    NEXT,
    Expect,
    Proj,
    Scenario,
    assert_contract,
    assert_same_ledger,
    environment,
    ledger_of,
    project,
    spelled,
)

WAITING = "wait for #12, then binding powers"  # scenario 6's checkpoint: the fix it waits for is merged
# in the quick run; the rest is marked slow (each scenario is a build and 4 subprocess runs)
QUICK = {"all-clean", "teammate-merged", "dirty-files", "empty-state", "user-checks"}


def _remote(tmp: Path, next: str = NEXT) -> tuple[Proj, tuple[Path, Path, Path]]:
    pair = gitrepos.remote_pair(tmp)
    proj = project(tmp, root=pair[1])
    if next != NEXT:
        proj.checkpoint(next=next)
    return proj, pair


# ---------------------------------------------------------------------------------------------------- builders


def all_clean(tmp: Path) -> Proj:
    return project(tmp)


def teammate_merged(tmp: Path) -> Proj:
    proj, pair = _remote(tmp, next=WAITING)
    gitrepos.teammate_merge(pair, "Fix tokenizer (#12)")
    return proj


def rebased(tmp: Path) -> Proj:
    proj, _ = _remote(tmp)
    gitrepos.rebase_head(proj.root)
    return proj


def branch_switched(tmp: Path) -> Proj:
    proj, _ = _remote(tmp)
    gitrepos.switch(proj.root, "main")
    return proj


def dirty_files(tmp: Path) -> Proj:
    proj = project(tmp)
    (proj.root / "notes.md").write_text("notes\n")
    (proj.root / "app.py").write_text("print('changed')\n")
    return proj


def own_commits(tmp: Path) -> Proj:
    proj = project(tmp)
    for name, subject in (("lexer.py", "Add the lexer table"), ("parser.py", "Parse prefix operators")):
        (proj.root / name).write_text("x = 1\n")
        proj.git("add", name)
        proj.git("commit", "-q", "-m", subject)
    return proj


def upstream_behind(tmp: Path) -> Proj:
    proj, (_, agent, teammate) = _remote(tmp)
    gitrepos.git(teammate, "fetch", "-q", "origin", who=gitrepos.TEAMMATE)
    gitrepos.git(teammate, "switch", "-q", "-c", "feat", "origin/feat", who=gitrepos.TEAMMATE)
    gitrepos.commit(teammate, "calc/eval.py", "x = 2\n", "Evaluate sums", who=gitrepos.TEAMMATE)
    gitrepos.git(teammate, "push", "-q", "origin", "feat", who=gitrepos.TEAMMATE)
    gitrepos.git(agent, "fetch", "-q", "origin")
    return proj


def cursor_ahead(tmp: Path) -> Proj:
    proj = project(tmp)
    data = proj.root / "data"
    data.mkdir()
    (data / "out.jsonl").write_text("".join(f'{{"index": {i}}}\n' for i in range(3)))
    (data / "progress.json").write_text('{"cursor": 5}')
    proj.git("add", "data")
    proj.git("commit", "-q", "-m", "pipeline output")
    proj.cli("cursor", "register", "batch", "data/out.jsonl", "data/progress.json")
    proj.checkpoint()
    return proj


def old_handoff(tmp: Path) -> Proj:
    proj = project(tmp)
    note = proj.root.parent / "note.md"
    note.write_text("Tokenizer done; parser next. Watch the unary minus.\n")
    proj.cli("handoff", "--file", str(note))
    proj.checkpoint(done="the unary minus", next=NEXT)
    return proj


def rewritten_latch(tmp: Path) -> Proj:
    proj = project(tmp)
    proj.cli("invariant", "Parse with a Pratt parser", "--because", "precedence stays in one table")
    proj.checkpoint()
    path = proj.root / "state" / "10_invariants.md"
    path.write_text(path.read_text().replace("Pratt parser", "recursive descent parser"))
    return proj


def no_transcript(tmp: Path) -> Proj:
    return project(tmp)


def no_git(tmp: Path) -> Proj:
    return project(tmp, git=False)


def gh_missing(tmp: Path) -> Proj:
    return project(tmp, path=gh.bin_path(tmp))


def gh_signed_out(tmp: Path) -> Proj:
    return project(tmp, path=gh.bin_path(tmp, gh="fake", auth=False))


def empty_state(tmp: Path) -> Proj:
    proj = Proj(tmp / "project", environment(tmp))
    (proj.root / "state").mkdir(parents=True)
    return proj


USER_CHECKS = """\
from rehydrate.checks import Finding


class Green:
    name = "green"

    def run(self, context):
        return [Finding(self.name, "ok", "looked at the build log (build/log.txt): green")]


class Boom:
    name = "boom"

    def run(self, context):
        raise RuntimeError("the user's check broke")
"""


def user_checks(tmp: Path) -> Proj:
    lib = tmp / "lib"
    lib.mkdir()
    (lib / "userchk.py").write_text(USER_CHECKS)
    proj = project(tmp)
    proj.env["PYTHONPATH"] = os.pathsep.join(p for p in (str(lib), proj.env.get("PYTHONPATH", "")) if p)
    (proj.root / "state" / "config.json").write_text('{"checks": ["userchk:Green", "userchk:Boom", "nomod:x"]}')
    return proj


# ---------------------------------------------------------------------------------------------------- the table

CLEAN = {"identity": {"ok"}, "state": {"ok"}, "handoff": {"n/a"}, "cursors": {"n/a"}}
LOCAL = {**CLEAN, "live-state": {"ok", "n/a"}, "direction": {"n/a"}}  # a repository with no remote
RECOVERED = Expect(0, "recovered", statuses=LOCAL, next_has=[NEXT])

SCENARIOS = [
    Scenario("all-clean", all_clean, RECOVERED),
    Scenario(
        "teammate-merged",
        teammate_merged,
        Expect(
            1,
            "degraded",
            ["direction"],
            {**CLEAN, "live-state": {"ok", "n/a"}, "direction": {"degraded"}},
            {"direction": ["Fix tokenizer (#12)", "origin/main", "Ann"]},
            next_has=["git log HEAD..origin/main"],
            next_not=[WAITING],
        ),
    ),
    Scenario(
        "rebase",
        rebased,
        Expect(
            1,
            "degraded",
            ["live-state"],
            {**CLEAN, "live-state": {"degraded", "n/a"}, "direction": {"ok"}},
            {"live-state": ["not a descendant", "rebase"]},
            next_has=["git diff"],
            next_not=[NEXT],
        ),
    ),
    Scenario(
        "branch-switched",
        branch_switched,
        Expect(
            1,
            "degraded",
            ["live-state"],
            {**CLEAN, "live-state": {"degraded", "ok", "n/a"}, "direction": {"ok"}},
            {"live-state": ["on main", "was on feat", "checkout: moving from feat to main"]},
            next_has=["git switch feat"],
        ),
    ),
    Scenario(
        "dirty-files",
        dirty_files,
        Expect(
            1,
            "degraded",
            ["live-state"],
            {**CLEAN, "live-state": {"ok", "degraded", "n/a"}, "direction": {"n/a"}},
            {"live-state": ["notes.md", "app.py"]},
            next_has=["git diff", "app.py", "notes.md"],
            next_not=[NEXT],
        ),
    ),
    Scenario(
        "own-commits",
        own_commits,
        Expect(
            1,
            "degraded",
            ["live-state"],
            {**CLEAN, "live-state": {"degraded", "n/a"}, "direction": {"n/a"}},
            {"live-state": ["Add the lexer table", "Parse prefix operators"]},
            next_has=["git log"],
            next_not=[NEXT],
        ),
    ),
    Scenario(
        "upstream-behind",
        upstream_behind,
        Expect(
            1,
            "degraded",
            ["live-state"],
            {**CLEAN, "live-state": {"ok", "degraded", "n/a"}, "direction": {"ok"}},
            {"live-state": ["1 behind", "as of the last fetch"]},
            next_has=["pull"],
        ),
    ),
    Scenario(
        "cursor-ahead",
        cursor_ahead,
        Expect(
            1,
            "degraded",
            ["cursors"],
            {**LOCAL, "cursors": {"degraded"}},
            {"cursors": ["batch"]},
            next_has=["rehydrate cursor repair"],
            next_not=[NEXT],
        ),
    ),
    Scenario(
        "old-handoff",
        old_handoff,
        Expect(
            1,
            "degraded",
            ["handoff"],
            {**LOCAL, "handoff": {"degraded"}},
            {"handoff": ["state/20_handoff.md", "predates the last checkpoint"]},
            next_has=["the checkpoint wins"],
        ),
    ),
    Scenario(
        "rewritten-latch",
        rewritten_latch,
        Expect(
            1,
            "degraded",
            ["state"],
            {**LOCAL, "state": {"degraded"}},
            {"state": ["10_invariants.md"]},
            next_has=["restore the recorded text"],
            next_not=[NEXT],
        ),
    ),
    Scenario("no-transcript-recorded", no_transcript, RECOVERED),
    Scenario(
        "no-git",
        no_git,
        Expect(
            0,
            "recovered",
            statuses={**CLEAN, "live-state": {"n/a"}, "direction": {"n/a"}},
            finding_has={"live-state": ["not a git repository"], "direction": ["not a git repository"]},
            next_has=[NEXT],
        ),
    ),
    Scenario("gh-missing", gh_missing, RECOVERED),
    Scenario("gh-signed-out", gh_signed_out, RECOVERED),
    Scenario(
        "empty-state",
        empty_state,
        Expect(
            3,
            "degraded",
            ["identity", "state"],
            {"identity": {"failed"}, "state": {"failed"}},
            {"identity": ["did not load"]},
            ask_has=["What is the task?"],
        ),
        hook_expect="silent",
    ),
    Scenario(
        "user-checks",
        user_checks,
        Expect(
            1,
            "degraded",
            ["boom", "nomod:x"],
            {**LOCAL, "green": {"ok"}, "boom": {"failed"}, "nomod:x": {"skipped"}},
            {"green": ["build/log.txt"], "boom": ["RuntimeError"], "nomod:x": ["could not import"]},
            next_has=[NEXT],  # a failed check with no next step of its own leaves the checkpoint's
        ),
    ),
]
USER = {"green", "boom", "nomod:x"}  # the user checks' names: recover-only lines


def _param(s: Scenario) -> Any:
    return pytest.param(s, id=s.name, marks=() if s.name in QUICK else (pytest.mark.slow,))


# ---------------------------------------------------------------------------------------------------- the checks


def check_recover(answer: dict[str, Any], code: int, e: Expect) -> None:
    assert_contract(answer)
    assert code == e.code, answer
    assert answer["ok"] is (e.confidence == "recovered") and answer["confidence"] == e.confidence, answer
    assert answer["degraded"] == e.degraded, answer
    lowering = [c["name"] for c in answer["checks"] if c["status"] in ("degraded", "failed", "skipped")]
    assert answer["degraded"] == list(dict.fromkeys(lowering)), answer  # derived from the statuses, in order
    seen: dict[str, set[str]] = {}
    for c in answer["checks"]:
        seen.setdefault(c["name"], set()).add(c["status"])
    for name, statuses in e.statuses.items():
        assert seen.get(name) == statuses, (name, seen.get(name), answer)
    for name, words in e.finding_has.items():
        text = " ".join(spelled(answer, c["finding"]) for c in answer["checks"] if c["name"] == name)
        for word in words:
            assert word in text, (name, word, text)
    for word in e.next_has:
        assert word in spelled(answer, answer["next"]), (word, answer["next"])
    for word in e.next_not:
        assert answer["next"] != word, answer["next"]  # the stale next step is not the next safe action
    if e.ask_has:
        assert answer["ask"] is not None and answer["next"] == "stop and ask: " + answer["ask"]
        for word in e.ask_has:
            assert word in answer["ask"], answer["ask"]
    else:
        assert answer["ask"] is None, answer
    for c in answer["checks"]:  # every clean line of the recovery checks says where it looked: a file, a command
        if c["status"] in ("ok", "n/a") and c["name"] not in ("identity", "state"):
            assert _names_a_place(c["finding"]), c


PLACES = ("state/", "git ", "WAL", "looked", "origin/", ".md", ".json", ".py", ".txt", "gh ", "transcript")


def _names_a_place(finding: str) -> bool:
    return any(p in finding for p in PLACES)


@pytest.mark.parametrize("scenario", [_param(s) for s in SCENARIOS])
def test_scenario(scenario: Scenario, tmp_path: Path) -> None:
    proj = scenario.build(tmp_path)
    before = _files(proj.root / "state")
    code, answer = proj.recover()
    check_recover(answer, code, scenario.expect)
    assert _files(proj.root / "state") == before, "recover wrote to the state folder"
    for harness in HARNESSES:  # each hook sees the state recover saw (a hook's resume record taken back)
        hook_code, brief, err = proj.session_start(harness)
        _restore(proj.root / "state", before)
        assert hook_code == 0, err
        if scenario.hook_expect == "silent":  # no brief, nothing for the agent (stderr: a note for the user)
            assert brief == "", (harness, brief)
            continue
        ledger = ledger_of(brief)
        assert_same_ledger(answer, ledger, recover_only=USER)
        for word in scenario.expect.brief_has:
            assert word in brief, (harness, word)
        if scenario.name == "user-checks":  # recover-only: never run by a hook
            assert "boom" not in brief and "could not import" not in brief


def _restore(root: Path, files: dict[str, bytes]) -> None:
    """The state folder as it was, and what this worktree saw of it forgotten (its cache, .git/rehydrate: it saw
    the record now taken back)."""
    shutil.rmtree(root.parent / ".git" / "rehydrate", ignore_errors=True)
    for name in set(_files(root)) - set(files):
        _path(root, name).unlink()
    for name, data in files.items():
        path = _path(root, name)
        if not path.exists() or path.read_bytes() != data:  # the journal went with .git/rehydrate: put back
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


JOURNAL = "<journal>/"  # the files of the state's journal (store/local/journal.py: the reads, outside the state folder)


def _journal(root: Path) -> Path:
    from rehydrate.store.local import place as local

    return Path(local.local_dir(str(root))) / "journal"


def _path(root: Path, name: str) -> Path:
    return _journal(root) / name[len(JOURNAL) :] if name.startswith(JOURNAL) else root / name


def _files(root: Path) -> dict[str, bytes]:
    """Every file of the state folder, and of its journal (named under JOURNAL), by its relative path."""
    out = {}
    inside = _journal(root).resolve().is_relative_to(root.resolve())  # outside git: state/.local/journal
    for base, prefix in ((root, ""),) if inside else ((root, ""), (_journal(root), JOURNAL)):
        for folder, _dirs, names in os.walk(base):
            for name in names:
                path = Path(folder, name)
                out[prefix + str(path.relative_to(base))] = path.read_bytes()
    return out


def test_the_table_covers_the_first_round() -> None:
    """The first round's scenarios (plan 3.2: 1, 6, 8-15, 17-19, 22, 23, 28) are all in the table, once."""
    names = [s.name for s in SCENARIOS]
    assert len(names) == len(set(names)) == 16
    assert set(names) >= QUICK


def test_a_scenario_that_breaks_its_expectation_fails(tmp_path: Path) -> None:
    """The checks above catch a wrong ledger: a degraded scenario checked against the clean one's expectation."""
    proj = dirty_files(tmp_path)
    code, answer = proj.recover()
    with pytest.raises(AssertionError):
        check_recover(answer, code, RECOVERED)
    brief = ledger_of(proj.session_start("claude")[1])
    clean = {**answer, "checks": [c for c in answer["checks"] if c["status"] != "degraded"]}
    with pytest.raises(AssertionError):
        assert_same_ledger(clean, brief)


def test_the_helpers_stamp_around_the_checkpoint_and_run_the_compaction_hook(tmp_path: Path) -> None:
    """Proj.after/before give stamps either side of the checkpoint's; precompact runs the real hook, which records
    a compaction (with the transcript's path) after the checkpoint: what the second round's scenarios build on."""
    proj = project(tmp_path)
    ts = proj.ckpt_ts()
    assert proj.before(60) < ts < proj.after(60) and proj.after(60).endswith("Z")
    transcript = Path(proj.env["HOME"]) / ".claude" / "projects" / "p" / "t.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("")
    code, _, err = proj.precompact("claude", str(transcript))
    assert code == 0, err
    last = proj.records()[-1]
    assert last["op"] == "compaction" and last["data"]["transcript_path"] == str(transcript), last
