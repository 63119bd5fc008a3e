"""rehydrate.proc: processes started together, waited for under one deadline, never left behind (no zombie, no open
descriptor: the autouse no_leaked_descriptors fixture fails a test that leaves one)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from rehydrate import proc

PY = sys.executable


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_every_process_runs_at_once_and_answers_in_the_order_of_the_commands(tmp_path: Path) -> None:
    batch = proc.start(
        [
            [PY, "-c", "import sys; sys.stdout.write('one'); sys.stderr.write('err one')"],
            [PY, "-c", "import sys; sys.stdout.write('two'); sys.exit(3)"],
        ]
    )
    one, two = batch.wait(60.0)
    assert (one.code, one.out, one.err, one.timed_out, one.missing) == (0, b"one", b"err one", False, False)
    assert (two.code, two.out, two.timed_out) == (3, b"two", False)


def test_a_missing_program_is_missing_not_an_error(tmp_path: Path) -> None:
    missing, ok = proc.start([["rehydrate-no-such-program-x"], [PY, "-c", "print(1)"]]).wait(60.0)
    assert missing.missing and missing.code is None and not missing.timed_out
    assert ok.code == 0 and ok.out == b"1\n"


def test_a_hanging_process_is_killed_with_its_whole_group_at_the_deadline(tmp_path: Path) -> None:
    # the child starts a grandchild that holds the pipes open, says so on stdout, writes both pids, then both sleep:
    # killing the child alone would leave the grandchild; killing the group leaves nothing. The deadline is set once
    # the pids are on disk (never a guess at how long a loaded machine takes to start them)
    pids = tmp_path / "pids"
    script = (
        "import os, subprocess, sys, time\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'])\n"
        "sys.stdout.write('started'); sys.stdout.flush()\n"
        f"open({str(pids)!r} + '.part', 'w').write(f'{{os.getpid()}} {{g.pid}}')\n"
        f"os.replace({str(pids)!r} + '.part', {str(pids)!r})\n"
        "time.sleep(3600)\n"
    )
    begun = time.monotonic()
    batch = proc.start([[PY, "-c", "print('fast')"], [PY, "-c", script]])
    while not pids.exists():  # the observable event: both processes started
        assert time.monotonic() - begun < 120, "the child never wrote its pids"
        os.sched_yield()
    fast, hung = batch.wait(time.monotonic() - begun + 2.0)  # from now, 2 s to drain what is already in the pipes
    assert fast.code == 0 and fast.out == b"fast\n" and not fast.timed_out
    assert hung.timed_out and hung.code is None and hung.out == b"started"
    child, grandchild = (int(p) for p in pids.read_text().split())
    assert _gone(child)  # reaped: no zombie left either (kill(0) succeeds on a zombie)
    for _ in range(1000):  # the grandchild's parent is dead: init reaps it, at its own pace
        if _gone(grandchild) or _is_zombie(grandchild):
            break
        os.sched_yield()
    assert _gone(grandchild) or _is_zombie(grandchild)


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True


def test_output_is_kept_up_to_its_cap_and_the_rest_is_read_so_the_child_never_blocks() -> None:
    big = proc.MAX_OUT * 3
    (r,) = proc.start(
        [[PY, "-c", f"import sys; sys.stdout.write('x' * {big}); sys.stderr.write('e' * {big}); sys.exit(5)"]]
    ).wait(60.0)
    assert r.code == 5 and not r.timed_out
    assert r.out == b"x" * proc.MAX_OUT and r.err == b"e" * proc.MAX_ERR


def test_env_and_cwd_are_the_childs_and_the_callers_folder_is_kept(tmp_path: Path) -> None:
    here = os.getcwd()
    (r,) = proc.start(
        [[PY, "-c", "import os; print(os.getcwd()); print(os.environ.get('REHYDRATE_T'))"]],
        env={**os.environ, "REHYDRATE_T": "seen"},
        cwd=str(tmp_path),
    ).wait(60.0)
    assert r.out.decode().split() == [os.path.realpath(tmp_path), "seen"]
    assert os.getcwd() == here


def test_stdin_is_empty_so_a_child_that_reads_it_never_waits() -> None:
    (r,) = proc.start([[PY, "-c", "import sys; print(repr(sys.stdin.read()))"]]).wait(60.0)
    assert r.out == b"''\n"


def test_a_batch_is_waited_for_once() -> None:
    batch = proc.start([[PY, "-c", "pass"]])
    batch.wait(60.0)
    with pytest.raises(RuntimeError):
        batch.wait(60.0)


def test_the_program_is_found_on_the_childs_path_not_the_callers(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "rehydrate-fake-tool"
    fake.write_text(f"#!{PY}\nprint('fake')\n")
    fake.chmod(0o755)
    (bin_dir / "not-executable").write_text("x")
    found, absent, plain = proc.start(
        [["rehydrate-fake-tool"], ["python3"], ["not-executable"]], env={"PATH": str(bin_dir)}
    ).wait(60.0)
    assert found.code == 0 and found.out == b"fake\n"
    assert absent.missing and plain.missing  # python3 is on the caller's PATH only
    (r,) = proc.start([["rehydrate-fake-tool"]]).wait(60.0)
    assert r.missing
