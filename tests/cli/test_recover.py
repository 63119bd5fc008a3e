"""`rehydrate recover`: the ledger as text and as JSON (the contract), its exit codes, --transcript, and that it
writes nothing and holds no lock while its checks run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import HOSTILE, no_crash, rehydrate, shown_clean, tree
from rehydrate.store.state import State
from scenarios.build import assert_contract

# A user's check that reports what recover gave the checks, and whether the state's lock is free while they run.
PROBE = """\
import fcntl, os
from rehydrate.checks import Finding


class Probe:
    name = "probe"

    def run(self, context):
        fd = os.open(context.state.root, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            lock = "lock free"
        except OSError:
            lock = "lock held"
        finally:
            os.close(fd)
        since = context.since.seq if context.since is not None else None
        text = f"{lock}; scope {context.scope}; transcript {context.transcript}; since {since}"
        text += f"; env {context.env is not None}; config {sorted(context.config)} (probe.py)"
        return [Finding(self.name, "ok", text)]
"""


def recover(*args: str, **kw: Any) -> tuple[int, dict[str, Any]]:
    r = rehydrate("recover", "--json", *args, **kw)
    no_crash(r)
    answer = json.loads(r.out)
    return r.code, answer


def with_probe(repo: Path, tmp_path: Path) -> dict[str, str]:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "probe.py").write_text(PROBE)
    (repo / "state" / "config.json").write_text('{"checks": ["probe:Probe"]}')
    return {"PYTHONPATH": str(lib)}


def test_a_clean_state_is_recovered_and_the_next_step_is_the_checkpoints(repo: Path, state: State) -> None:
    code, answer = recover()
    assert code == 0 and answer["ok"] is True and answer["confidence"] == "recovered", answer
    assert answer["next"] == "write the parser" and answer["ask"] is None
    assert [c["name"] for c in answer["checks"]][:3] == ["identity", "state", "handoff"]
    assert_contract(answer)


def test_the_text_ledger_names_the_checkpoint_each_finding_and_the_next_step(repo: Path, state: State) -> None:
    (repo / "notes.md").write_text("x\n")  # dirty, not in the checkpoint
    r = rehydrate("recover")
    assert r.code == 1, r
    lines = r.out.splitlines()
    head = f"rehydrate recover · state/ · actor agent · checkpoint 4 at {records_ts(repo)}"
    assert lines[0].startswith(head) and "(HEAD " in lines[0], lines[0]
    assert '- identity: ok: actor agent; goal: "Ship the parser"' in lines
    bad = next(i for i, ln in enumerate(lines) if ln.startswith("- live-state: degraded:"))
    assert "notes.md" in lines[bad] and lines[bad + 1].startswith("  next: look at git status and git diff")
    assert "confidence: degraded (live-state)" in lines
    assert lines[-1].startswith("next safe action: look at git status") and "notes.md" in lines[-1]


def records_ts(repo: Path) -> str:
    last = json.loads((repo / "state" / "wal" / "agent.jsonl").read_bytes().splitlines()[-1])
    return str(last["ts"])[:16] + "Z"


def test_recover_writes_nothing_not_even_a_repair_or_a_record(repo: Path, state: State) -> None:
    before = tree(repo / "state")
    assert recover()[0] == 0
    assert tree(repo / "state") == before  # the WAL's bytes and every file's: no record, no cache
    os.remove(repo / "state" / "99_next.md")  # a repairable problem: resume would rewrite the view, recover not
    before = tree(repo / "state")
    code, answer = recover()
    assert code == 1 and "state" in answer["degraded"], answer
    assert any("99_next.md" in c["finding"] for c in answer["checks"] if c["name"] == "state"), answer
    assert "rehydrate verify --repair" in answer["next"]
    r = rehydrate("recover")
    assert r.code == 1 and "99_next.md" in r.out
    assert tree(repo / "state") == before
    assert rehydrate("resume").code == 0  # resume repairs, and logs itself
    assert tree(repo / "state") != before


def test_the_checks_run_after_the_lock_is_released_in_recover_scope(repo: Path, state: State, tmp_path: Path) -> None:
    env = with_probe(repo, tmp_path)
    code, answer = recover(env=env)
    assert code == 0, answer
    [probe] = [c for c in answer["checks"] if c["name"] == "probe"]
    assert probe["finding"].startswith("lock free; scope recover; transcript None; since 4; env True"), probe
    assert "config ['checks']" in probe["finding"]
    assert answer["checks"][-1]["name"] == "probe"  # the user's checks come last, after cursors


def test_transcript_must_be_a_regular_file(repo: Path, state: State, tmp_path: Path) -> None:
    env = with_probe(repo, tmp_path)
    log = tmp_path / "t.jsonl"
    log.write_text("{}\n")
    _, answer = recover("--transcript", str(log), env=env)
    [probe] = [c for c in answer["checks"] if c["name"] == "probe"]
    assert f"transcript {log};" in probe["finding"], probe  # handed to the checks, as an absolute path
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for bad, why in ((tmp_path / "absent.jsonl", "No such file"), (tmp_path, "not a regular file"), (fifo, "not a")):
        r = rehydrate("recover", "--json", "--transcript", str(bad))
        assert r.code == 2, r
        error = json.loads(r.out)
        assert error["command"] == "recover" and error["ok"] is False and error["error"]["exit_code"] == 2
        assert error["error"]["message"].startswith(f"--transcript: {bad}: ") and why in error["error"]["message"]
        r = rehydrate("recover", "--transcript", str(bad))
        assert r.code == 2 and r.out == "" and f"rehydrate: --transcript: {bad}" in r.err, r


def test_usage_errors_keep_the_usual_error_shape(repo: Path, state: State) -> None:
    r = rehydrate("recover", "--json", "--bogus")
    assert r.code == 2 and json.loads(r.out)["error"]["exit_code"] == 2, r


def test_an_empty_state_folder_exits_3_and_asks_for_the_task(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    code, answer = recover(cwd=tmp_path)
    assert code == 3, answer
    assert_contract(answer)
    assert answer["confidence"] == "degraded" and answer["checks"][0]["name"] == "identity"
    assert answer["checks"][0]["status"] == "failed"
    assert answer["ask"].startswith("What is the task?") and answer["next"] == "stop and ask: " + answer["ask"]
    r = rehydrate("recover", cwd=tmp_path)
    assert r.code == 3 and r.out.splitlines()[-1].startswith("ask a human: What is the task?"), r
    assert "rehydrate: no WAL in" in r.err


def test_a_state_that_does_not_load_exits_3_and_says_to_fix_it_first(repo: Path, state: State) -> None:
    (repo / "state" / "wal" / "agent.jsonl").write_bytes(b"not a record\n" * 3)
    code, answer = recover()
    assert code == 3, answer
    assert_contract(answer)
    assert answer["checks"][0] == {
        "name": "identity",
        "status": "failed",
        "finding": answer["checks"][0]["finding"],
        "next": None,
    }
    assert answer["checks"][0]["finding"].startswith("the state did not load: ")
    assert answer["next"].startswith("fix the state first: ") and answer["ask"] is None


def test_untrusted_text_reaches_the_terminal_clean(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    hostile = HOSTILE.replace("\x00", "")  # argv cannot hold a NUL
    assert rehydrate("init", "--goal", "Ship " + hostile, cwd=project).code == 0
    assert rehydrate("checkpoint", "--done", "a" + hostile, "--next", "b" + hostile, cwd=project).code == 0
    r = rehydrate("recover", cwd=project)
    no_crash(r)
    shown_clean(r.out)
    assert "next safe action: b" in r.out


def test_help_names_every_option(repo: Path) -> None:
    r = rehydrate("recover", "--help")
    assert r.code == 0
    for option in ("--json", "--transcript PATH", "--dir DIR", "--actor NAME"):
        assert option in r.out, option
    assert "Read-only" in r.out


@pytest.mark.parametrize("actor", ["agent", "other"])
def test_actor_names_whose_wal_is_read(repo: Path, state: State, actor: str) -> None:
    code, answer = recover("--actor", actor)
    if actor == "agent":
        assert code == 0
    else:  # no log for that actor: the state does not load for it, and the ledger says what to fix
        assert code == 3 and "has no history yet" in answer["checks"][0]["finding"], answer
        assert answer["next"].startswith("fix the state first:") and "--actor" in answer["next"]


def test_a_torn_tail_is_named_and_left_for_verify_repair(repo: Path, state: State) -> None:
    wal = repo / "state" / "wal" / "agent.jsonl"
    with open(wal, "ab") as f:
        f.write(b'{"v":1,"seq":5,"ts')  # a write torn by a crash: resume would cut it (keeping a .broken copy)
    before = tree(repo / "state")
    code, answer = recover()
    assert code == 1 and answer["degraded"] == ["state"], answer
    assert any("torn-tail" in c["finding"] for c in answer["checks"]), answer
    assert answer["next"].startswith("run `rehydrate verify --repair`")
    assert tree(repo / "state") == before  # the WAL's bytes as they were: nothing cut, no .broken copy


def test_dir_names_the_state_folder_from_anywhere(repo: Path, state: State, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, answer = recover("--dir", str(repo / "state"), cwd=elsewhere)
    assert code == 0 and answer["next"] == "write the parser", answer
    code, answer = recover(cwd=elsewhere)  # no state folder found upward: nothing to act on, so ask for the task
    assert code == 3 and answer["ask"] is not None and answer["ask"].startswith("What is the task?"), answer


def test_what_a_users_check_prints_never_reaches_the_json(repo: Path, state: State, tmp_path: Path) -> None:
    """A check whose module prints on import and in run (or `this:s`, which prints the Zen of Python): its words go
    to stderr, and stdout holds the JSON alone."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "noisy_i12.py").write_text(
        "from rehydrate.checks import Finding\nprint('IMPORTED')\n"
        "class Loud:\n    name = 'loud'\n    def run(self, context):\n"
        "        print('RAN')\n        return [Finding('loud', 'ok', 'looked at lib/')]\n"
    )
    (repo / "state" / "config.json").write_text('{"checks": ["noisy_i12:Loud", "this:s"]}')
    r = rehydrate("recover", "--json", cwd=repo, env={"PYTHONPATH": str(lib)})
    answer = json.loads(r.out)
    assert [c["status"] for c in answer["checks"] if c["name"] == "loud"] == ["ok"]
    assert "IMPORTED" in r.err and "RAN" in r.err and "Beautiful is better than ugly" in r.err
