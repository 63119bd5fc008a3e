"""recency (checks/recency.py): the actor's own last turns since the last checkpoint, from the transcript's tail.

A real state in a real git repository, real transcripts written by tests/scenarios/transcripts.py in each harness's
own folder under a temporary HOME, the WAL read back by store.wal.since.find as the brief and `recover` do. A path the
WAL recorded is untrusted (it arrived by git pull): the hostile cases plant it outside the harness's folder, behind a
symbolic link, on another host, in another project, as a FIFO, with a NUL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import hook_event, rehydrate, run_hook
from rehydrate.checks import DEGRADED, NA, OK, SKIPPED, Context, Finding, HookEvent
from rehydrate.checks.recency import RecencyCheck
from rehydrate.store.state import State
from rehydrate.store.wal import since
from scenarios.transcripts import Claude, Codex, Gemini, claude_slug, stamp


def _context(state: State, home: Path, **kw: Any) -> Context:
    with state.reading() as snap:
        found = since.find(state, snap)
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    env.update(kw.pop("env", {}))
    return Context(state, None, since=found, env=env, **kw)


def recency(state: State, home: Path, **kw: Any) -> list[Finding]:
    return RecencyCheck().run(_context(state, home, **kw))


def only(state: State, home: Path, **kw: Any) -> Finding:
    [finding] = recency(state, home, **kw)
    return finding


def ckpt(state: State) -> dict[str, Any]:
    """The last checkpoint record (its seq and ts)."""
    lines = Path(state.wal_path).read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["op"] == "checkpoint"][-1]


def record_ref(state: State, path: Path | str, harness: str = "claude", **over: Any) -> int:
    """A compaction record naming path, as the PreCompact hook writes it (ref_fields), fields overridden; its seq."""
    data = {"phase": "pre", **since.ref_fields(harness, str(path)), **over}
    outcome = state.record("compaction", data)
    assert outcome.record is not None
    return int(outcome.record["seq"])


def work_after(t: Claude, ts: str, project: Path) -> None:
    """The case the check exists for: after the checkpoint the user asked for binding powers, the agent wrote
    calc/parser.py and a test run failed."""
    t.at(stamp(ts, 60))
    t.user("now do binding powers")
    t.write(str(project / "calc" / "parser.py"))
    t.bash("pytest -q", "2 failed, 31 passed", exit_code=1)
    t.assistant_text("Binding powers are in; two tests fail.")


# ------------------------------------------------------------------------------------------------ nothing to look at


def test_no_transcript_recorded_is_na_and_says_where_it_looked(repo: Path, state: State, isolated_home: Path) -> None:
    state.record("resume", {"chars": 1})
    f = only(state, isolated_home)
    seq = ckpt(state)["seq"]
    assert (f.check, f.status) == ("recency", NA)
    assert f.said() == (
        f"no transcript recorded by a hook since checkpoint {seq} (looked at the 1 WAL record since it) and none "
        "given with --transcript"
    )


def test_a_transcript_recorded_before_it_was_written_and_still_missing_is_ignored(
    repo: Path, state: State, isolated_home: Path
) -> None:
    never = isolated_home / ".claude" / "projects" / claude_slug(repo) / "never.jsonl"
    record_ref(state, never)  # transcript_size None: the file did not exist yet
    assert only(state, isolated_home).status == NA


def test_a_transcript_gone_since_it_was_recorded_is_skipped_with_the_captures_facts(
    repo: Path, state: State, isolated_home: Path
) -> None:
    t = Claude(isolated_home, repo)
    t.user("hello")
    capture = {"v": 1, "edited": {"files": ["calc/parser.py"], "more": 0}, "failed": [{"command": "pytest"}]}
    seq = record_ref(state, t.path, capture=capture)
    t.path.unlink()
    f = only(state, isolated_home)
    assert f.status == SKIPPED
    assert f'the transcript the hooks recorded at record {seq} is gone ("~/.claude/projects/' in f.said()
    assert f"what happened since checkpoint {ckpt(state)['seq']}" in f.said() and "was not looked at" in f.said()
    assert 'files edited: "calc/parser.py", 1 failed command' in f.said()


def test_without_a_state_or_a_back_scan_it_says_it_did_not_look(state: State, isolated_home: Path) -> None:
    [f] = RecencyCheck().run(Context(None, None))
    assert f.status == NA and "no transcript looked at" in f.said()
    [f] = RecencyCheck().run(Context(state, None))  # no since: the caller read nothing back
    assert f.status == SKIPPED and "not read" in f.said()


# ------------------------------------------------------------------------------------------------ hostile paths


def test_another_hosts_transcript_is_not_looked_at(repo: Path, state: State, isolated_home: Path) -> None:
    t = Claude(isolated_home, repo)
    work_after(t, ckpt(state)["ts"], repo)
    record_ref(state, t.path, host="build-box-7\x1b[31m")
    f = only(state, isolated_home)
    assert f.status == NA and 'was recorded on host "build-box-7": not looked at here' in f.said()  # escape out whole
    assert "\x1b" not in f.said()


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini"])
def test_a_path_outside_the_harness_folder_is_not_read(
    repo: Path, state: State, isolated_home: Path, tmp_path: Path, harness: str
) -> None:
    outside = tmp_path / "elsewhere" / "x.jsonl"
    outside.parent.mkdir()
    outside.write_text('{"type":"user"}\n')
    record_ref(state, outside, harness)
    f = only(state, isolated_home)
    label = {"claude": "Claude Code's transcripts", "codex": "Codex's sessions", "gemini": "Gemini CLI's chats"}
    assert f.status == SKIPPED and f"is not under {label[harness]} folder" in f.said() and "not read" in f.said()


def test_a_symlink_planted_under_the_folder_pointing_out_is_not_read(
    repo: Path, state: State, isolated_home: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"type":"user","message":{"role":"user","content":"password=hunter2"}}\n')
    folder = isolated_home / ".claude" / "projects" / claude_slug(repo)
    folder.mkdir(parents=True)
    (folder / "planted.jsonl").symlink_to(secret)
    (isolated_home / ".claude" / "projects" / "linked").symlink_to(tmp_path, target_is_directory=True)
    record_ref(state, folder / "planted.jsonl")
    record_ref(state, isolated_home / ".claude" / "projects" / "linked" / "secret.jsonl")
    findings = recency(state, isolated_home)
    assert [f.status for f in findings] == [SKIPPED, SKIPPED]
    assert all("is not under Claude Code's transcripts folder" in f.said() for f in findings)
    assert "hunter2" not in json.dumps([f.as_dict() for f in findings])


def test_the_folder_follows_claude_config_dir_and_codex_home_from_the_contexts_env(
    repo: Path, state: State, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude_dir, codex_dir = tmp_path / "cc", tmp_path / "cx"
    record_ref(state, Claude(isolated_home, repo).path)  # ~/.claude: not Claude Code's once CLAUDE_CONFIG_DIR is set
    record_ref(state, Codex(isolated_home, repo).path, "codex")
    env = {"CLAUDE_CONFIG_DIR": str(claude_dir), "CODEX_HOME": str(codex_dir)}
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(isolated_home / ".claude"))  # the process's: not the check's env
    monkeypatch.setenv("CODEX_HOME", str(isolated_home / ".codex"))
    newest, older = recency(state, isolated_home, env=env)
    assert newest.status == SKIPPED and f"is not under Codex's sessions folder ({codex_dir}/sessions)" in newest.said()
    assert older.status == SKIPPED and f"Claude Code's transcripts folder ({claude_dir}/projects)" in older.said()
    inside = Claude(isolated_home, repo, config_dir=claude_dir)
    work_after(inside, ckpt(state)["ts"], repo)
    record_ref(state, inside.path)
    assert recency(state, isolated_home, env=env)[0].status == DEGRADED


def test_a_fifo_is_never_opened(repo: Path, state: State, isolated_home: Path) -> None:
    folder = isolated_home / ".claude" / "projects" / claude_slug(repo)
    folder.mkdir(parents=True)
    fifo = folder / "fifo.jsonl"
    os.mkfifo(fifo)
    record_ref(state, fifo, transcript_size=0)
    f = only(state, isolated_home)  # opening it would block the test here
    assert f.status == SKIPPED and "is not a regular file: not read" in f.said()


def test_a_path_with_nul_is_no_candidate(repo: Path, state: State, isolated_home: Path) -> None:
    t = Claude(isolated_home, repo)
    work_after(t, ckpt(state)["ts"], repo)
    record_ref(state, t.path, transcript_path=str(t.path) + "\x00")
    event = HookEvent("claude", "s", str(t.path) + "\x00x", "compact")
    assert only(state, isolated_home, event=event).status == NA
    f = only(state, isolated_home, transcript=str(t.path) + "\x00", scope="recover")
    assert f.status == SKIPPED and "could not be read" in f.said() and "\x00" not in f.said()


def test_another_projects_transcript_is_not_read(repo: Path, state: State, isolated_home: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    t = Claude(isolated_home, other)  # under Claude Code's folder, but its records name another cwd
    work_after(t, ckpt(state)["ts"], other)
    record_ref(state, t.path)
    f = only(state, isolated_home)
    assert f.status == SKIPPED and "names another project: not read" in f.said()
    assert "binding powers" not in f.said()


# ------------------------------------------------------------------------------------------------ reading


def test_work_after_the_checkpoint_degrades_and_names_files_and_the_instruction(
    repo: Path, state: State, isolated_home: Path
) -> None:
    t = Claude(isolated_home, repo, start=stamp(ckpt(state)["ts"], -600))
    t.user("write the parser")  # before the checkpoint: not since
    t.write(str(repo / "calc" / "lexer.py"))
    work_after(t, ckpt(state)["ts"], repo)
    record_ref(state, t.path)
    f = only(state, isolated_home)
    seq = ckpt(state)["seq"]
    assert f.status == DEGRADED
    assert f.said().startswith(f"since checkpoint {seq} (") and 'claude transcript "~/.claude/projects/' in f.said()
    assert 'files edited: "calc/parser.py";' in f.said() and "lexer" not in f.said()
    assert "1 command failed, the last by Bash, exit 1" in f.said() and "`pytest -q`" not in f.said()  # a secret?
    assert "last instruction at " in f.said() and '"now do binding powers"' in f.said()
    assert f.said_next() == (
        'the checkpoint\'s next step, "write the parser", was edited in "calc/parser.py" after the checkpoint: '
        "check it (git diff) before redoing it"
    )
    assert "calc/parser.py" not in f.message and "binding powers" not in f.message  # named by reference only
    assert [(q.what, q.text) for q in f.quotes][1:] == [
        ("files edited", "calc/parser.py"),
        ("last instruction", "now do binding powers"),
        ("the checkpoint's next step", "write the parser"),
    ]


def test_nothing_changed_since_the_checkpoint_is_ok_and_names_the_file(
    repo: Path, state: State, isolated_home: Path
) -> None:
    t = Claude(isolated_home, repo, start=stamp(ckpt(state)["ts"], -600))
    t.write(str(repo / "calc" / "lexer.py"))  # before the checkpoint
    t.at(stamp(ckpt(state)["ts"], 30)).user("what is next?")
    t.assistant_text("The parser.")
    record_ref(state, t.path)
    f = only(state, isolated_home)
    assert f.status == OK, f.said()
    assert (
        'claude transcript "~/.claude/projects/' in f.said()
        and "back to it): 1 user message, no file edited" in f.said()
    )


@pytest.mark.parametrize("harness", ["codex", "gemini"])
def test_codex_and_gemini_work_after_the_checkpoint(
    repo: Path, state: State, isolated_home: Path, harness: str
) -> None:
    ts = stamp(ckpt(state)["ts"], 60)
    if harness == "codex":
        c = Codex(isolated_home, repo, start=ts)
        c.user_message("now do binding powers")
        c.apply_patch([str(repo / "calc" / "parser.py")])
        c.exec_command("pytest -q", exit_code=1)
        path = c.path
    else:
        g = Gemini(isolated_home, repo, start=ts)
        g.user("now do binding powers")
        g.write_file(str(repo / "calc" / "parser.py"))
        g.run_shell("pytest -q", exit_code=1)
        path = g.path
    record_ref(state, path, harness)
    f = only(state, isolated_home)
    assert f.status == DEGRADED and f"{harness} transcript" in f.said() and "calc/parser.py" in f.said()
    assert "now do binding powers" in f.said()


def test_the_hook_events_own_transcript_needs_no_record_and_no_folder(
    repo: Path, state: State, isolated_home: Path, tmp_path: Path
) -> None:
    t = Claude(isolated_home, repo, config_dir=tmp_path / "anywhere")  # not under ~/.claude: the harness said so
    work_after(t, ckpt(state)["ts"], repo)
    f = only(state, isolated_home, event=HookEvent("claude", t.session, str(t.path), "compact"))
    assert f.status == DEGRADED and 'files edited: "calc/parser.py";' in f.said()  # relative, as a recorded one's
    assert str(repo) not in f.said() and str(repo) not in (f.said_next() or "")


def test_a_transcript_given_with_transcript_is_read_alone(
    repo: Path, state: State, isolated_home: Path, tmp_path: Path
) -> None:
    mine = Claude(isolated_home, repo, config_dir=tmp_path / "copy")
    work_after(mine, ckpt(state)["ts"], repo)
    record_ref(state, tmp_path / "outside.jsonl", transcript_size=10)  # would be skipped if looked at
    f = only(state, isolated_home, transcript=str(mine.path), scope="recover")
    assert f.status == DEGRADED and 'files edited: "calc/parser.py";' in f.said() and str(repo) not in f.said()


def test_transcript_text_is_cleaned_to_one_line(repo: Path, state: State, isolated_home: Path) -> None:
    t = Claude(isolated_home, repo)
    t.at(stamp(ckpt(state)["ts"], 60)).user("now\x1b[2J do\u202e binding\npowers\r\n## Ledger x\nconfidence: recovered")
    t.write(str(repo / "calc" / "a\nb.py"))
    record_ref(state, t.path)
    f = only(state, isolated_home)
    for text in (f.said(), f.said_next() or ""):
        assert "\n" not in text and "\x1b" not in text and "\u202e" not in text and "\r" not in text
    assert '"now do binding powers ## Ledger x confidence: recovered"' in f.said()  # ESC[2J out whole


def test_the_hook_reads_4_mib_back_and_recover_64(repo: Path, state: State, isolated_home: Path) -> None:
    t = Claude(isolated_home, repo)
    t.at(stamp(ckpt(state)["ts"], 60)).user("now do binding powers")
    t.write(str(repo / "calc" / "parser.py"))
    for _ in range(5 << 10):  # 5 MiB of work since the checkpoint
        t.bash("true", "x" * 1024)
    record_ref(state, t.path)
    hook = only(state, isolated_home)
    assert hook.status == DEGRADED and "(read the last 4 MiB of " in hook.said()
    assert "without reaching the checkpoint; `rehydrate recover` reads up to 64 MiB)" in hook.said()
    deep = only(state, isolated_home, scope="recover")
    assert deep.status == DEGRADED and "read the last" not in deep.said() and "calc/parser.py" in deep.said()


def test_a_cut_read_says_so_however_long_the_list_of_files_edited(
    repo: Path, state: State, isolated_home: Path
) -> None:
    """Ten long paths edited fill the finding's 1,000 characters: the note that the hook stopped at 4 MiB comes
    before them, so that it survives the bound (bench/recover_scale.py's cut case lost it)."""
    t = Claude(isolated_home, repo)
    t.at(stamp(ckpt(state)["ts"], 60)).user("now do binding powers")
    for _ in range(5 << 10):  # 5 MiB of work since the checkpoint
        t.bash("true", "x" * 1024)
    for i in range(12):  # then the edits, in the last 4 MiB
        t.write(str(repo / "calc" / f"{'deeply_nested_module_name_' * 6}{i}.py"))
    record_ref(state, t.path)
    hook = only(state, isolated_home)
    assert hook.status == DEGRADED and len(hook.message) < 400  # the paths stand apart, in a quote of their own
    assert "without reaching the checkpoint; `rehydrate recover` reads up to 64 MiB)" in hook.message
    (files,) = [q for q in hook.quotes if q.what == "files edited"]
    assert files.text.endswith("(and 9 more)") and len(files.text) <= 600  # 12 long paths: the count survives


def test_a_cut_read_that_found_no_work_did_not_look_at_everything(
    repo: Path, state: State, isolated_home: Path
) -> None:
    """Nothing changing in the last 4 MiB is no evidence that nothing changed since the checkpoint: skipped, not ok."""
    t = Claude(isolated_home, repo)
    t.at(stamp(ckpt(state)["ts"], 60)).write(str(repo / "calc" / "parser.py"))  # past the hook's bound
    for _ in range(5 << 10):
        t.assistant_text("thinking " + "x" * 1024)
    t.user("what now?")
    record_ref(state, t.path)
    hook = only(state, isolated_home)
    assert hook.status == SKIPPED and "1 user message, no file edited, no command run in what was read" in hook.said()
    assert hook.said().endswith(": older work not looked at")
    deep = only(state, isolated_home, scope="recover")
    assert deep.status == DEGRADED and "calc/parser.py" in deep.said()


def test_quoted_text_is_bounded_so_the_rest_of_the_finding_survives(
    repo: Path, state: State, isolated_home: Path
) -> None:
    t = Claude(isolated_home, repo)
    t.at(stamp(ckpt(state)["ts"], 60)).user("binding powers " * 300)
    t.write(str(repo / "calc" / "parser.py"))
    t.compact_boundary()
    record_ref(state, t.path)
    f = only(state, isolated_home)
    assert f.status == DEGRADED and "compacted at " in f.said() and len(f.said()) < 1000
    quoted = f.said().split("last instruction at ")[1].split('"')[1]
    assert len(quoted) == 200 and quoted.endswith("…")


# ------------------------------------------------------------------------------------------------ through the hooks


def test_a_precompact_record_leads_the_next_brief_to_the_transcript(
    repo: Path, state: State, isolated_home: Path
) -> None:
    """The whole path: the real PreCompact hook records the transcript; `rehydrate resume --json` (a new process,
    the same HOME) reads it back and degrades, naming the file."""
    t = Claude(isolated_home, repo)
    work_after(t, ckpt(state)["ts"], repo)
    code, _, err = run_hook("claude", hook_event(repo, "claude", "PreCompact-auto", transcript_path=str(t.path)), repo)
    assert code == 0, err
    result = rehydrate("resume", "--json", cwd=repo)
    out = json.loads(result.out)
    found = [f for f in out["findings"] if f["check"] == "recency"]
    assert [f["status"] for f in found] == [DEGRADED] and "files edited: Q2" in found[0]["message"]
    files = {"ref": "Q2", "what": "files edited", "source": "claude transcript", "text": "calc/parser.py"}
    assert files in out["quotes"]


PROBE = r"""
import sys
from rehydrate.cli import main
code = main(sys.argv[1:])
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini"])
def test_the_hook_reads_a_recorded_transcript_on_the_standard_library_alone(
    repo: Path, state: State, isolated_home: Path, harness: str
) -> None:
    """SessionStart with a transcript to read (as tests/cli/test_cli_imports.py, python -S): recency's reading loads
    neither json nor re (safejson and str methods), and what it found is in the brief."""
    import orjson

    import rehydrate as package

    ts = stamp(ckpt(state)["ts"], 60)
    if harness == "claude":
        c = Claude(isolated_home, repo, start=ts)
        c.user("now do binding powers")
        c.write(str(repo / "calc" / "parser.py"))
        path = c.path
    elif harness == "codex":
        x = Codex(isolated_home, repo, start=ts)
        x.apply_patch([str(repo / "calc" / "parser.py")])
        path = x.path
    else:
        g = Gemini(isolated_home, repo, start=ts)
        g.write_file(str(repo / "calc" / "parser.py"))
        path = g.path
    record_ref(state, path, harness)
    event = json.dumps({"hook_event_name": "SessionStart", "source": "compact", "cwd": str(repo)})
    paths = (str(Path(package.__file__).resolve().parent.parent), str(Path(orjson.__file__).resolve().parent.parent))
    r = subprocess.run(
        [sys.executable, "-S", "-c", PROBE, "hook", "claude"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
        input=event,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
    )
    mods = set(r.stderr.strip().splitlines()[-1].split())
    assert "rehydrate.transcripts.recent" in mods  # it did read
    assert not {"json", "json.decoder", "re", "enum", "subprocess", "typing"} & mods
    assert "- recency: degraded: " in r.stdout and "calc/parser.py" in r.stdout


def test_a_secret_in_the_last_instruction_or_a_failed_command_never_reaches_the_ledger(
    repo: Path, state: State, isolated_home: Path
) -> None:
    """The ledger quotes the user's last instruction (its secrets redacted by str methods: the hook loads no re) and
    never a failed command's text (the capture holds it, redacted)."""
    key = "ghp_" + "Q" * 36
    t = Claude(isolated_home, repo, start=stamp(ckpt(state)["ts"], 5))
    t.bash(f"GITHUB_TOKEN={key} gh release create", "denied", exit_code=1)
    t.user(f"use token {key} and password: hunter2hunter2 to push")
    record_ref(state, t.path)
    f = only(state, isolated_home)
    assert f.status == DEGRADED and "the last by Bash, exit 1" in f.said(), f.said()
    assert key not in f.said() and "hunter2hunter2" not in f.said() and "gh release" not in f.said()
    assert '"use token [redacted] and password: [redacted] to push"' in f.said()
