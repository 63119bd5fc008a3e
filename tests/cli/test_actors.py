"""`rehydrate mail` (send, read, --all, --json) and `rehydrate promise` (done), through the real CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import Result, rehydrate
from rehydrate.store.wal import lines as wallines


def as_(actor: str, *args: str) -> Result:
    return rehydrate(*args, env={"REHYDRATE_ACTOR": actor})


def _log(repo: Path, actor: str) -> list[dict[str, object]]:
    return list(wallines.records(str(repo / "state" / "wal" / f"{actor}.jsonl")))


def test_send_then_read_sorted_by_kind_with_one_read_record(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g", "--actor", "alice").code == 0
    for kind, text in (("fyi", "the docs moved"), ("redirect", "stop the lexer"), ("actionable", "review #3")):
        r = as_("bob", "mail", "send", "--to", "alice", "--kind", kind, text)
        assert r.code == 0 and r.out.startswith("sent M-"), r.err
    r = as_("bob", "mail", "send", "--to", "alice", "no kind given")
    assert r.code == 0 and "(fyi)" in r.out
    sent = [rec for rec in _log(repo, "bob") if rec["op"] == "mail"]
    assert len(sent) == 4
    first = sent[0]["data"]
    assert isinstance(first, dict) and set(first) == {"id", "to", "kind", "path", "sha256"}
    path = repo / "state" / str(first["path"])
    assert path.read_text().startswith("from: bob\nto: alice\nkind: fyi\nts: ")
    assert path.name.endswith(f"-bob-{first['id']}.md")

    r = as_("alice", "mail", "--json")
    assert r.code == 0, r.err
    got = json.loads(r.out)
    assert [m["kind"] for m in got["messages"]] == ["redirect", "actionable", "fyi", "fyi"]
    assert [m["text"] for m in got["messages"]][2:] == ["the docs moved", "no kind given"]  # then by time
    assert all(m["read"] is False for m in got["messages"])
    reads = [rec for rec in _log(repo, "alice") if rec["op"] == "read"]
    assert len(reads) == 1 and sorted(reads[0]["data"]["mail"]) == sorted(m["id"] for m in got["messages"])  # type: ignore[index]

    r = as_("alice", "mail")
    assert r.code == 0 and r.out == "no unread messages\n"
    assert len([rec for rec in _log(repo, "alice") if rec["op"] == "read"]) == 1  # nothing shown: nothing recorded
    r = as_("alice", "mail", "--all")
    assert r.code == 0 and r.out.count("(read)") == 4 and "stop the lexer" in r.out


def test_mail_to_all_reaches_everyone_but_the_sender(repo: Path) -> None:
    rehydrate("init", "--goal", "g", "--actor", "alice")
    assert as_("bob", "mail", "send", "--to", "all", "standup at 10").code == 0
    assert (repo / "state" / "mail" / "all").is_dir()
    assert "standup at 10" in as_("alice", "mail").out
    assert "standup at 10" in as_("carol", "mail").out
    assert as_("bob", "mail").out == "no unread messages\n"


def test_options_after_send_and_before_it(repo: Path) -> None:
    rehydrate("init", "--goal", "g", "--actor", "alice")
    r = rehydrate("mail", "--actor", "bob", "send", "--to", "alice", "hi", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["to"] == "alice"
    assert [rec["op"] for rec in _log(repo, "bob")] == ["join", "mail"]


def test_mail_usage_errors_exit_2(repo: Path) -> None:
    rehydrate("init", "--goal", "g", "--actor", "alice")
    for args in (
        ["mail", "send", "--to", "bob", "--kind", "urgent", "x"],  # not a kind
        ["mail", "send", "--to", "../evil", "x"],  # not an actor's name
        ["mail", "send", "--to", "alice", "x"],  # to oneself
        ["mail", "send", "--to", "bob", "   "],  # empty
        ["mail", "send", "x"],  # no --to
        ["mail", "send", "--to", "bob", "x" * 20000],  # over the cap
    ):
        r = as_("alice", *args)
        assert r.code == 2, (args, r.code, r.err)
    assert not (repo / "state" / "mail" / "bob").exists() or not any((repo / "state" / "mail" / "bob").iterdir())


def test_promise_and_done(repo: Path) -> None:
    rehydrate("init", "--goal", "g", "--actor", "alice")
    r = as_("alice", "promise", "review", "bob's", "parser", "--json")
    assert r.code == 0, r.err
    ident = json.loads(r.out)["id"]
    assert ident.startswith("P-") and len(ident) == 8
    rec = _log(repo, "alice")[-1]
    assert rec["op"] == "promise" and rec["data"] == {"id": ident, "text": "review bob's parser"}
    assert as_("alice", "promise", "done", "P-000000").code == 2  # unknown
    assert as_("alice", "promise", "done", "nonsense").code == 2  # not an id
    assert as_("bob", "promise", "done", ident).code == 2  # another actor's
    r = as_("alice", "promise", "done", ident)
    assert r.code == 0 and "done" in r.out
    assert _log(repo, "alice")[-1]["data"] == {"id": ident, "done": True}
    r = as_("alice", "promise", "done", ident)
    assert r.code == 2 and "already done" in r.err


def test_a_new_actor_reads_its_mail_before_any_other_write(repo: Path) -> None:
    rehydrate("init", "--goal", "g", "--actor", "alice")
    as_("alice", "mail", "send", "--to", "bob", "--kind", "blocker", "the schema is yours")
    r = as_("bob", "mail")
    assert r.code == 0 and "the schema is yours" in r.out
    assert [rec["op"] for rec in _log(repo, "bob")] == ["join", "read"]


def test_mail_names_and_skips_hostile_files_without_following_them(repo: Path, tmp_path: Path) -> None:
    rehydrate("init", "--goal", "g", "--actor", "alice")
    as_("bob", "mail", "send", "--to", "alice", "a real one")
    secret = tmp_path / "secret"
    secret.write_text("from: x\n\nsecret\n")
    folder = repo / "state" / "mail" / "alice"
    (folder / "20261201T060000000Z-mallory-M-0123abcd.md").symlink_to(secret)
    os.mkfifo(folder / "20261201T060000001Z-mallory-M-0123abce.md")
    r = as_("alice", "mail", "--all")
    assert r.code == 0 and "a real one" in r.out and "secret" not in r.out
    warned = [ln for ln in r.err.splitlines() if ln.startswith("rehydrate: warning: state/mail/alice/")]
    assert len(warned) == 2 and all("skipped" in ln for ln in warned), r.err
    assert secret.read_text() == "from: x\n\nsecret\n"


def test_send_refuses_a_mail_folder_that_is_a_link(repo: Path, tmp_path: Path) -> None:
    rehydrate("init", "--goal", "g", "--actor", "alice")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "state" / "mail").symlink_to(outside)
    r = as_("alice", "mail", "send", "--to", "bob", "hi")
    assert r.code == 3 and "state/mail is a symbolic link" in r.err, r.err
    (repo / "state" / "mail").unlink()
    (repo / "state" / "mail").mkdir()
    (repo / "state" / "mail" / "bob").symlink_to(outside)
    r = as_("alice", "mail", "send", "--to", "bob", "hi")
    assert r.code == 3 and "state/mail/bob is a symbolic link" in r.err, r.err
    r = as_("bob", "mail")
    assert r.code == 0 and "state/mail/bob: not a real folder" in r.err
    assert not any(outside.iterdir())  # nothing written through the link
    assert [rec["op"] for rec in _log(repo, "alice") if rec["op"] == "mail"] == []


def test_a_rotate_carries_what_was_read_and_the_open_promises(repo: Path) -> None:
    """The log is archived by a rotate: the messages read stay read and the open promises stay open (the rotate
    record carries them); a promise kept before it is not carried."""
    rehydrate("init", "--goal", "g", "--actor", "alice")
    assert as_("bob", "mail", "send", "--to", "alice", "--kind", "redirect", "stop").code == 0
    assert as_("alice", "mail").code == 0  # read
    kept = json.loads(as_("alice", "promise", "one", "--json").out)["id"]
    still = json.loads(as_("alice", "promise", "two", "--json").out)["id"]
    assert as_("alice", "promise", "done", kept).code == 0
    assert as_("alice", "rotate").code == 0
    rec = _log(repo, "alice")[0]
    assert rec["op"] == "rotate" and set(rec["data"]["mail"]["promises"]) == {still}  # type: ignore[index]
    unread = json.loads(as_("alice", "mail", "--json").out)
    assert unread["messages"] == [], unread
    assert as_("alice", "promise", "done", still).code == 0  # still open after the rotate
    assert as_("alice", "promise", "done", kept).code == 2  # kept before it: not carried, so unknown
