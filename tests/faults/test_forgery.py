"""Forgery where a key is held (store/keys/), and the README's limits where none is: a receipt appended by hand, a
stamp changed by hand, an early record edited and the whole chain re-sealed, the log replaced by one forged
`rotate`. Each forger here can write every file in state/ and compute every hash (tests/faults/forger below), but
holds no key. Through the real CLI, on real repositories; the key lives outside the repository (REHYDRATE_KEY_FILE
under the test's folder)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.conftest import rehydrate

from rehydrate.store.wal import digest


@pytest.fixture
def keyed(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REHYDRATE_KEY_FILE", str(tmp_path / "keys" / "agent.key"))
    assert rehydrate("init", "--goal", "ship the parser", cwd=repo).code == 0
    res = rehydrate("key", "init", cwd=repo)
    assert res.code == 0 and "registered key" in res.out, res.err
    assert (tmp_path / "keys" / "agent.key").stat().st_mode & 0o777 == 0o600
    assert rehydrate("run", "--claim", "tests pass", "--", "true", cwd=repo).code == 0
    assert rehydrate("checkpoint", "--done", "lexer", "--next", "parser", cwd=repo).code == 0
    assert rehydrate("stamp", "app.py", cwd=repo).code == 0
    assert rehydrate("verify", cwd=repo).code == 0
    return repo


def _log(repo: Path) -> Path:
    return repo / "state" / "wal" / "agent.jsonl"


def _records(repo: Path) -> list[dict]:
    return [json.loads(line) for line in _log(repo).read_text().splitlines()]


def _resealed(records: list[dict]) -> bytes:
    """The forger's pen: every record re-sealed after the previous one (prev and h recomputed); sigs copied as
    they were (the forger cannot make new ones)."""
    out, prev = [], None
    for rec in records:
        body = {k: v for k, v in rec.items() if k != "h"}
        if prev is not None:
            body["prev"] = prev
        sealed, line = digest.seal_line(body)
        prev = sealed["h"]
        out.append(line)
    return b"".join(out)


def _write(repo: Path, records: list[dict]) -> None:
    _log(repo).write_bytes(_resealed(records))


def _forged(repo: Path) -> str:
    res = rehydrate("verify", cwd=repo)
    assert res.code == 1, res.out
    assert "[forged]" in res.out, res.out
    brief = rehydrate("resume", cwd=repo)
    assert "state: degraded" in brief.out and "[forged]" in brief.out
    return res.out


def test_a_hand_written_receipt_is_forged(keyed: Path) -> None:
    recs = _records(keyed)
    fake = {k: v for k, v in recs[-1].items() if k != "sig"}
    fake.update(seq=fake["seq"] + 1, op="receipt", data={"argv": ["pytest"], "exit": 0, "claim": "all green"})
    _write(keyed, [*recs, fake])
    out = _forged(keyed)
    assert "(seq 6, receipt) is not signed by agent's key" in out and "it carries no signature" in out
    # a signed record written now would vouch for it: every write is refused, nothing appended
    before = _log(keyed).read_bytes()
    res = rehydrate("checkpoint", "--done", "d", "--next", "n", cwd=keyed)
    assert res.code == 3 and "refusing to write" in res.err and "[forged]" in res.err
    assert _log(keyed).read_bytes() == before


def test_a_stamp_changed_by_hand_is_forged(keyed: Path) -> None:
    recs = _records(keyed)
    assert recs[-1]["op"] == "stamp"
    (keyed / "app.py").write_text("print('changed')\n")
    import hashlib

    recs[-1]["data"]["evidence"]["stamps"]["app.py"] = hashlib.sha256(b"print('changed')\n").hexdigest()
    _write(keyed, recs)
    out = _forged(keyed)
    assert "its signature does not verify" in out


def test_an_early_record_edited_and_the_chain_resealed_is_forged(keyed: Path) -> None:
    recs = _records(keyed)
    recs[0]["data"]["goal"] = "ship whatever"  # the init record: every later one re-sealed after it
    _write(keyed, recs)
    assert "its signature does not verify" in _forged(keyed)


def test_the_log_replaced_by_one_forged_rotate_is_forged_even_with_the_public_key_removed(keyed: Path) -> None:
    recs = _records(keyed)
    rotate = {
        "v": 1,
        "seq": recs[-1]["seq"] + 1,
        "ts": recs[-1]["ts"],
        "actor": "agent",
        "op": "rotate",
        "data": {"archive": "archive/x.jsonl", "goal": {"goal": "ship whatever"}, "lines": []},
        "views": recs[-1]["views"],
        "prev": recs[-1]["h"],
    }
    _write(keyed, [rotate])
    assert "(seq 6, rotate) is not signed" in _forged(keyed)
    os.unlink(keyed / "state" / "keys" / "agent.pub")  # the forger takes the key away too: this clone knew it
    out = _forged(keyed)
    assert "[key-removed]" in out and "still checks agent's log with it" in out


def test_without_a_key_the_readme_limits_hold(repo: Path) -> None:
    """No key: a consistent forgery passes `verify`, as the README's trust model says."""
    assert rehydrate("init", "--goal", "ship", cwd=repo).code == 0
    assert rehydrate("checkpoint", "--done", "a", "--next", "b", cwd=repo).code == 0
    recs = _records(repo)
    recs[0]["data"]["goal"] = "ship whatever"
    _write(repo, recs)
    res = rehydrate("verify", cwd=repo)
    assert "hash mismatch" not in res.out and "[forged]" not in res.out
    fake = dict(recs[-1], seq=recs[-1]["seq"] + 1, op="receipt", data={"argv": ["pytest"], "exit": 0})
    _write(repo, [*_records(repo), fake])
    assert "[forged]" not in rehydrate("verify", cwd=repo).out


def test_a_keyed_actor_writes_nothing_without_its_key(keyed: Path, tmp_path: Path) -> None:
    before = _log(keyed).read_bytes()
    os.rename(tmp_path / "keys" / "agent.key", tmp_path / "keys" / "moved")
    res = rehydrate("checkpoint", "--done", "d", "--next", "n", cwd=keyed)
    assert res.code == 3 and "agent's records are signed" in res.err and "does not exist" in res.err, res.err
    assert _log(keyed).read_bytes() == before
    other = tmp_path / "other.key"
    res = rehydrate("key", "show", cwd=keyed, env={"REHYDRATE_KEY_FILE": str(other)})
    assert res.code == 0 and "none" in res.out
    res = rehydrate("checkpoint", "--done", "d", "--next", "n", cwd=keyed, env={"REHYDRATE_KEY_FILE": str(other)})
    assert res.code == 3  # no key there either
    rehydrate("key", "init", cwd=keyed, env={"REHYDRATE_KEY_FILE": str(other)})  # makes another: a change
    res = rehydrate("checkpoint", "--done", "d", "--next", "n", cwd=keyed, env={"REHYDRATE_KEY_FILE": str(other)})
    assert res.code == 0
    assert rehydrate("verify", cwd=keyed).code == 0  # this clone registered the new key itself


def test_the_key_file_must_be_outside_the_repository(repo: Path) -> None:
    assert rehydrate("init", "--goal", "ship", cwd=repo).code == 0
    res = rehydrate("key", "init", cwd=repo, env={"REHYDRATE_KEY_FILE": str(repo / "secret.key")})
    assert res.code == 2 and "inside the repository" in res.err
    assert not (repo / "secret.key").exists()


def test_signed_records_carry_a_signature_each_and_the_chain_covers_it(keyed: Path) -> None:
    recs = _records(keyed)
    key = next(i for i, r in enumerate(recs) if r["op"] == "key")
    assert all("sig" not in r for r in recs[:key]) and all("sig" in r for r in recs[key:])
    assert {r["sig"]["key"] for r in recs[key:]} == {recs[key]["data"]["id"]}
    ignored = subprocess.run(["git", "check-ignore", "-q", "state/keys/agent.pub"], cwd=keyed, check=False)
    assert ignored.returncode == 1  # not ignored: the public key is committed with the state


def test_a_state_made_again_where_the_clone_knew_a_key_is_signed_and_named_until_the_pin_is_forgotten(
    keyed: Path,
) -> None:
    import shutil

    shutil.rmtree(keyed / "state")
    assert rehydrate("init", "--goal", "start over", cwd=keyed).code == 0
    res = rehydrate("verify", cwd=keyed)
    assert res.code == 1 and "[key-removed]" in res.out
    assert "[forged]" not in res.out  # the key pinned here still binds: the new log's records are signed with it
    assert "`rehydrate key trust agent` forgets it here" in res.out
    res = rehydrate("key", "trust", "agent", cwd=keyed)
    assert res.code == 0 and "forgot agent's key" in res.out
    assert rehydrate("verify", cwd=keyed).code == 0
    assert rehydrate("key", "trust", "agent", cwd=keyed).code == 2  # nothing committed, nothing pinned


def test_a_forged_line_of_work_hidden_in_a_teammates_log_is_named_by_verify(keyed: Path, tmp_path: Path) -> None:
    """A record forked off an early record of bob's and put before bob's last line (as a union merge would place a
    line of work): the session start checks bob's last record; `verify`, which reads every log, each head."""
    bob = {"REHYDRATE_ACTOR": "bob", "REHYDRATE_KEY_FILE": str(tmp_path / "keys" / "bob.key")}
    assert rehydrate("key", "init", cwd=keyed, env=bob).code == 0
    for step in ("one", "two"):
        assert rehydrate("checkpoint", "--done", step, "--next", "more", cwd=keyed, env=bob).code == 0
    assert rehydrate("verify", cwd=keyed).code == 0
    log = keyed / "state" / "wal" / "bob.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    base = json.loads(lines[-3])
    fork = {k: v for k, v in base.items() if k not in ("h", "sig")}
    fork.update(seq=base["seq"] + 1, op="receipt", data={"argv": ["pytest"], "exit": 0, "claim": "bob's tests"})
    fork["prev"] = base["h"]
    log.write_bytes(b"".join([*lines[:-1], digest.seal_line(fork)[1], lines[-1]]))
    res = rehydrate("verify", cwd=keyed)
    assert res.code == 1 and "bob's last record (seq" in res.out and "receipt) is not signed" in res.out, res.out


def test_a_forged_record_hidden_behind_a_repeat_of_the_last_signed_line_is_forged(keyed: Path) -> None:
    """A union merge can leave a line repeated (duplicate-record, skipped): a forger appends a receipt and then the
    last signed line again, so that the file's last line is signed. The head is the receipt all the same."""
    lines = _log(keyed).read_bytes().splitlines(keepends=True)
    last = json.loads(lines[-1])
    fake = {k: v for k, v in last.items() if k not in ("h", "sig")}
    fake.update(seq=last["seq"] + 1, op="receipt", data={"argv": ["pytest"], "exit": 0, "claim": "all green"})
    fake["prev"] = last["h"]
    _log(keyed).write_bytes(b"".join([*lines, digest.seal_line(fake)[1], lines[-1]]))
    out = _forged(keyed)
    assert "(seq 6, receipt) is not signed" in out
    assert rehydrate("checkpoint", "--done", "d", "--next", "n", cwd=keyed).code == 3


def test_deleting_the_public_key_does_not_let_unsigned_records_in(keyed: Path, tmp_path: Path) -> None:
    os.unlink(keyed / "state" / "keys" / "agent.pub")
    assert rehydrate("checkpoint", "--done", "d", "--next", "n", cwd=keyed).code == 0
    assert "sig" in _records(keyed)[-1]  # signed with the key this clone pinned
    os.rename(tmp_path / "keys" / "agent.key", tmp_path / "keys" / "moved")
    res = rehydrate("checkpoint", "--done", "e", "--next", "f", cwd=keyed)
    assert res.code == 3 and "agent's records are signed" in res.err


def test_a_teammates_forged_record_is_named_at_session_start(keyed: Path, tmp_path: Path) -> None:
    """Not only bob's last line: his records read back to one this clone verified where it verified it."""
    bob = {"REHYDRATE_ACTOR": "bob", "REHYDRATE_KEY_FILE": str(tmp_path / "keys" / "bob.key")}
    assert rehydrate("key", "init", cwd=keyed, env=bob).code == 0
    for step in ("one", "two"):
        assert rehydrate("checkpoint", "--done", step, "--next", "more", cwd=keyed, env=bob).code == 0
    assert rehydrate("status", cwd=keyed).code == 0  # agent's clone verifies bob's records up to his last
    log = keyed / "state" / "wal" / "bob.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    last = json.loads(lines[-1])
    fake = {k: v for k, v in last.items() if k not in ("h", "sig")}
    fake.update(seq=last["seq"] + 1, op="receipt", data={"argv": ["pytest"], "exit": 0}, prev=last["h"])
    log.write_bytes(b"".join([*lines, digest.seal_line(fake)[1], lines[-1]]))  # and bob's last line repeated
    res = rehydrate("resume", cwd=keyed)
    assert "bob's record (seq" in res.out and "[forged]" in res.out, res.out
    os.unlink(log)
    res = rehydrate("status", cwd=keyed)
    assert "[log-missing]" in res.out


def test_an_archive_edited_and_resealed_after_a_rotate_is_forged(keyed: Path) -> None:
    assert rehydrate("rotate", cwd=keyed).code == 0
    assert rehydrate("checkpoint", "--done", "after", "--next", "more", cwd=keyed).code == 0
    assert rehydrate("verify", cwd=keyed).code == 0  # a rotated keyed log and its archive, as written
    [archive] = (keyed / "state" / "archive").glob("agent-*.jsonl")
    recs = [json.loads(line) for line in archive.read_text().splitlines()]
    receipt = next(r for r in recs if r["op"] == "receipt")
    receipt["data"]["claim"] = "all 500 tests pass"
    archive.write_bytes(_resealed(recs))
    res = rehydrate("verify", cwd=keyed)
    assert res.code == 1 and "does not end in the rotate record that archived it" in res.out, res.out
    archive.unlink()
    assert "[archive-missing]" in rehydrate("verify", cwd=keyed).out


def test_a_key_init_stopped_before_the_public_key_is_written_is_named_and_finished_by_running_it_again(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key record is the commit point; state/keys/ACTOR.pub follows. Stopped in between (the write fails through
    the fsio seam), nothing is forged: the pinned key is named `key-removed`, and `key init` again finishes it."""
    from rehydrate.errors import RehydrateError
    from rehydrate.fs import write as fsio
    from rehydrate.store.keys import sign
    from rehydrate.store.state import State

    monkeypatch.setenv("REHYDRATE_KEY_FILE", str(tmp_path / "agent.key"))
    monkeypatch.chdir(repo)
    assert rehydrate("init", "--goal", "ship", cwd=repo).code == 0
    real = fsio.replace

    def failing(path: str, data: bytes, point: str, **kw: object) -> object:
        if path.endswith(".pub"):
            raise RehydrateError("the disk is full")
        return real(path, data, point, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(fsio, "replace", failing)
    state = State.open(repo / "state")
    with pytest.raises(RehydrateError):
        state.register_key(sign.create_private(str(tmp_path / "agent.key")))
    monkeypatch.setattr(fsio, "replace", real)
    res = rehydrate("verify", cwd=repo)
    assert res.code == 1 and "[key-removed]" in res.out and "run it again as agent" in res.out
    assert "[forged]" not in res.out
    assert rehydrate("key", "init", cwd=repo).code == 0
    assert rehydrate("verify", cwd=repo).code == 0
    assert rehydrate("checkpoint", "--done", "d", "--next", "n", cwd=repo).code == 0
