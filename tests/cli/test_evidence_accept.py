"""`rehydrate accept`: a reviewer's approval file taken only after its session ended and named it, and reported by
the checks when the file changes since; through the real CLI on a real repository."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import REAL_TRANSCRIPTS, git, needs_real_transcripts, rehydrate
from tests.transcripts.test_ended import DONE, PROMPT, RESULT, WRITE, claude


def _transcript(path: Path, approved: Path, *steps: tuple[str, object]) -> Path:
    records = claude(*steps)
    text = "".join(json.dumps(r) + "\n" for r in records).replace("/p/APPROVED", str(approved))
    path.write_text(text)
    return path


def _setup(repo: Path) -> Path:
    approved = repo / "APPROVED"
    approved.write_text("LGTM: calc/ reviewed\n")
    git(repo, "add", "APPROVED")
    git(repo, "commit", "-qm", "approval")
    assert rehydrate("init", "--goal", "ship", cwd=repo).code == 0
    return approved


def test_accepted_after_a_finished_transcript_then_reported_when_the_file_changes(repo: Path, tmp_path: Path) -> None:
    approved = _setup(repo)
    transcript = _transcript(tmp_path / "review.jsonl", approved, PROMPT, WRITE, RESULT, DONE)
    res = rehydrate("accept", "APPROVED", "--transcript", str(transcript), "--json", cwd=repo)
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert out["file"] == "APPROVED" and out["harness"] == "claude" and out["session"] == "s-1"
    rec = json.loads((repo / "state" / "wal" / "agent.jsonl").read_text().splitlines()[-1])
    assert rec["op"] == "accept" and rec["data"]["evidence"]["approvals"]["APPROVED"]["sha256"] == out["sha256"]
    ledger = rehydrate("recover", cwd=repo)
    assert ledger.code == 0 and "live-state: ok: approval APPROVED is the file accepted at" in ledger.out
    approved.write_text("LGTM (edited after the review)\n")
    ledger = rehydrate("recover", cwd=repo)
    assert ledger.code == 1
    assert "live-state: degraded: approval APPROVED changed since it was accepted" in ledger.out
    approved.unlink()
    assert "approval APPROVED is gone since" in rehydrate("resume", cwd=repo).out


def test_refused_while_the_reviewer_is_mid_turn(repo: Path, tmp_path: Path) -> None:
    approved = _setup(repo)
    transcript = _transcript(tmp_path / "review.jsonl", approved, PROMPT, WRITE)
    res = rehydrate("accept", "APPROVED", "--transcript", str(transcript), cwd=repo)
    assert res.code == 1
    assert "refused: the reviewer's session has not reached its end: 1 tool call(s) wait for their result" in res.err
    wal = (repo / "state" / "wal" / "agent.jsonl").read_text()
    assert '"op":"accept"' not in wal


def test_refused_when_the_transcript_does_not_name_the_file(repo: Path, tmp_path: Path) -> None:
    approved = _setup(repo)
    transcript = _transcript(tmp_path / "review.jsonl", approved, PROMPT, DONE)  # only the prompt names it
    res = rehydrate("accept", "APPROVED", "--transcript", str(transcript), "--json", cwd=repo)
    assert res.code == 1
    assert json.loads(res.out)["refused"] == (
        "the reviewer's transcript does not name APPROVED: nothing shows that the reviewer wrote it"
    )


def test_bad_input_is_named(repo: Path, tmp_path: Path) -> None:
    _setup(repo)
    res = rehydrate("accept", "APPROVED", "--transcript", str(tmp_path / "absent.jsonl"), cwd=repo)
    assert res.code == 2 and "cannot be read" in res.err
    res = rehydrate("accept", "APPROVED", "--transcript", str(tmp_path), cwd=repo)
    assert res.code == 2 and "not a regular file" in res.err
    res = rehydrate("accept", "MISSING", "--transcript", str(tmp_path), cwd=repo)
    assert res.code == 2 and "does not exist" in res.err


@needs_real_transcripts()
def test_a_real_codex_session(repo: Path) -> None:
    (repo / "JOKE.md").write_text("a joke\n")
    git(repo, "add", "JOKE.md")
    git(repo, "commit", "-qm", "joke")
    assert rehydrate("init", "--goal", "ship", cwd=repo).code == 0
    res = rehydrate("accept", "JOKE.md", "--transcript", str(REAL_TRANSCRIPTS / "codex-0.89.0-exec.jsonl"), cwd=repo)
    assert res.code == 0, res.err
    assert "accepted JOKE.md" in res.out and "codex session ended" in res.out


def test_a_name_inside_another_word_is_not_the_file_named(repo: Path, tmp_path: Path) -> None:
    """The reviewer's model wrote only "Verdict: UNAPPROVED": APPROVED is not named, so not accepted; OK is not
    named by BROKEN either. Written whole, each is."""
    approved = _setup(repo)
    (repo / "OK").write_text("ok\n")
    said = ("assistant", [{"type": "text", "text": "Verdict: UNAPPROVED; the build is BROKEN"}])
    transcript = _transcript(tmp_path / "review.jsonl", approved, PROMPT, said)
    for name in ("APPROVED", "OK"):
        res = rehydrate("accept", name, "--transcript", str(transcript), cwd=repo)
        assert res.code == 1, res.err
        assert f"refused: the reviewer's transcript does not name {name}:" in res.err
    said = ("assistant", [{"type": "text", "text": "Verdict: OK, wrote APPROVED."}])
    transcript = _transcript(tmp_path / "review2.jsonl", approved, PROMPT, said)
    for name in ("APPROVED", "OK"):
        assert rehydrate("accept", name, "--transcript", str(transcript), cwd=repo).code == 0
