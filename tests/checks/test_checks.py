"""The interfaces of the recovery ledger that its parts build against: frozen shapes.

Only what the parts rely on is pinned here: the closed status set, Finding's ask and ledger entry, Context's old
and new arguments, the check order with the mail slots, run_all's start-then-run, the ledger's JSON shape, and the
signatures of the parts still to be built (store.wal.since, transcripts.recent, harness.compaction.capture, proc,
checks.git.probe)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from rehydrate import brief, checks, proc
from rehydrate.checks import ORDER, STATUSES, Context, Finding, HookEvent, ledger
from rehydrate.checks.git.probe import probe
from rehydrate.harness.compaction import capture
from rehydrate.store import records
from rehydrate.store.state import State
from rehydrate.store.wal import since
from rehydrate.transcripts import recent

EXPECTED_ORDER = ("identity", "state", "handoff", "mailbox", "outbox", "recency", "live-state", "direction", "cursors")


def test_the_status_set_is_closed_and_an_unknown_status_never_counts_as_clean() -> None:
    assert STATUSES == ("ok", "degraded", "failed", "skipped", "n/a")
    for status in STATUSES:
        assert Finding("x", status, "m").status == status
    typo = Finding("mine", "skiped", "looked at nothing")
    assert (typo.status, typo.message) == ("failed", 'unknown status "skiped": looked at nothing')
    assert checks.confidence([typo]) == "degraded (mine)"
    hostile = Finding("mine", "ok\n## Ledger", "m")
    assert hostile.status == "failed" and "\n" not in hostile.message


def test_nothing_to_look_at_does_not_degrade() -> None:
    na = Finding("cursors", "n/a", "no pipeline registered (state/pipelines.json absent)")
    assert checks.confidence([Finding("identity", "ok", "fine"), na]) == "recovered"
    summed = ledger.summarize([na], checkpoint_next="binding powers", goal_present=True)
    assert (summed.confidence, summed.degraded, summed.next, summed.ask) == ("recovered", [], "binding powers", None)


def test_a_finding_carries_an_ask_and_a_ledger_entry_and_keeps_the_resume_contract() -> None:
    f = Finding("identity", "degraded", "no goal", "write one", ask="What is\nthe task?")
    assert f.ask == "What is the task?"
    assert Finding("identity", "ok", "fine").ask is None
    assert f.as_dict() == {"check": "identity", "status": "degraded", "message": "no goal", "next_action": "write one"}
    assert f.as_ledger() == {"name": "identity", "status": "degraded", "finding": "no goal", "next": "write one"}


def test_a_context_keeps_its_old_arguments_and_takes_the_new_ones_by_keyword(state: State) -> None:
    old = Context(state, state.reconcile(), None, {"00_goal.md": "# Goal"})
    assert old.views == {"00_goal.md": "# Goal"} and old.error is None
    assert (old.scope, old.since, old.transcript, old.event, old.config, old.env, old.shared) == (
        "hook",
        None,
        None,
        None,
        {},
        None,
        {},
    )
    assert Context(None, None, error="no state").error == "no state"
    event = HookEvent("claude", "s1", "/x.jsonl", "compact")
    new = Context(
        state,
        None,
        scope="recover",
        since=since.Since(),
        transcript="t.jsonl",
        event=event,
        config={"gh_timeout": 3},
        env={"PATH": "/bin"},
    )
    assert (new.scope, new.transcript, new.event, new.config, new.env) == (
        "recover",
        "t.jsonl",
        event,
        {"gh_timeout": 3},
        {"PATH": "/bin"},
    )
    with pytest.raises(ValueError, match="unknown scope"):
        Context(None, None, scope="recovery")
    with pytest.raises(TypeError):
        Context(None, None, None, None, "recover")  # type: ignore[misc]


def test_the_checks_run_in_the_ledgers_order_with_the_mail_slots_kept() -> None:
    assert ORDER == EXPECTED_ORDER
    names = [c.name for c in checks.registry()]
    assert names == list(EXPECTED_ORDER)  # mailbox and outbox answer their slots (store/mail/)
    assert [c.name for c in checks.registry("recover")] == names


class _Probe:
    def __init__(self, name: str, log: list[str], fail: str = "") -> None:
        self.name = name
        self.log = log
        self.fail = fail

    def start(self, context: Context) -> None:
        self.log.append(f"start {self.name}")
        if self.fail == "start":
            raise OSError("no git")

    def run(self, context: Context) -> list[Finding]:
        self.log.append(f"run {self.name}")
        if self.fail == "run":
            raise KeyError("x")
        return [Finding(self.name, "ok", "looked at x")]


def test_run_all_starts_every_check_before_running_any_and_a_raising_one_fails() -> None:
    log: list[str] = []
    found = checks.run_all(
        Context(None, None), [_Probe("a", log), _Probe("b", log, fail="start"), _Probe("c", log, fail="run")]
    )
    assert log == ["start a", "start b", "start c", "run a", "run c"]
    assert [(f.check, f.status) for f in found] == [("a", "ok"), ("b", "failed"), ("c", "failed")]
    assert "OSError: no git" in found[1].message


def test_start_all_starts_them_at_once_and_run_collects_them_later() -> None:
    """run_all in two halves: the starts run when start_all returns, the runs only when the caller asks."""
    log: list[str] = []
    started = checks.start_all(Context(None, None), [_Probe("a", log), _Probe("b", log, fail="start")])
    assert log == ["start a", "start b"]
    log.append("the caller's own work")
    found = started.run()
    assert log == ["start a", "start b", "the caller's own work", "run a"]
    assert [(f.check, f.status) for f in found] == [("a", "ok"), ("b", "failed")]


def test_the_registry_builds_and_starts_live_state_before_the_other_checks_load() -> None:
    """Each check is handed over as soon as it is built, those in EARLY first: live-state's git then runs while the
    others' modules load. The list keeps the checks' ORDER."""
    built: list[str] = []
    chosen = checks.registry("hook", lambda check: built.append(check.name))
    assert built[0] == "live-state" == checks.EARLY[0]
    assert [c.name for c in chosen] == [n for n in checks.ORDER if n in built]
    assert sorted(built) == sorted(c.name for c in chosen)


def test_the_summed_ledger_gives_one_next_step_and_the_recover_json_shape() -> None:
    ok = Finding("identity", "ok", "actor agent; goal: g")
    bad = Finding("cursors", "degraded", "pass B: cursor ahead", "run `rehydrate cursor repair`")
    summed = ledger.summarize([ok, bad], checkpoint_next="binding powers", goal_present=True)
    assert (summed.confidence, summed.degraded, summed.next) == ("degraded (cursors)", ["cursors"], bad.next_action)
    assert summed.confidence == checks.confidence([ok, bad])
    out = summed.as_json()
    assert list(out) == ["confidence", "degraded", "checks", "next", "ask", "quotes"]
    assert out["confidence"] == "degraded" and out["ask"] is None
    assert out["checks"] == [ok.as_ledger(), bad.as_ledger()]
    assert ledger.summarize([ok], checkpoint_next=None, goal_present=True).next == ledger.GOAL_FIRST
    asking = ledger.Ledger([], "recovered", [], None, "What is the task?", None).as_json()
    assert (asking["next"], asking["ask"]) == ("stop and ask: What is the task?", "What is the task?")
    note = ledger.summarize([], checkpoint_next="n", goal_present=True, deferred=["PR and CI (gh)"]).deferred
    assert note == "not run at session start: PR and CI (gh): `rehydrate recover` runs them"


def test_resume_takes_the_hook_events_transcript_and_gives_the_ledger_its_brief_shows(repo: Path, state: State) -> None:
    result = brief.resume(state, transcript=str(repo / "t.jsonl"), harness="claude")
    assert result.ledger is not None and result.ledger.confidence == result.confidence
    assert f"next safe action: {result.ledger.next}" in result.text


def _params(fn: object) -> list[tuple[str, str]]:
    return [(p.name, p.kind.name) for p in inspect.signature(fn).parameters.values()]  # type: ignore[arg-type]


def test_the_signatures_the_work_packages_build_against() -> None:
    kw, pos = "KEYWORD_ONLY", "POSITIONAL_OR_KEYWORD"
    assert _params(Context)[4:] == [(n, kw) for n in ("scope", "since", "transcript", "event", "config", "env")]
    assert _params(since.find) == [("state", pos), ("snap", pos), ("max_bytes", pos)]
    assert _params(recent.read_since) == [("path", pos), ("since_ts", pos)] + [
        (n, kw) for n in ("loads", "max_bytes", "harness", "project", "todos_back", "numbered")
    ]
    assert _params(capture.capture) == [(n, pos) for n in ("root", "event", "since", "config")]
    assert _params(proc.start) == [("cmds", pos), ("env", kw), ("cwd", kw)]
    assert _params(proc.Batch.wait) == [("self", pos), ("deadline", pos)]
    assert _params(probe) == [("context", pos)]
    assert _params(ledger.summarize) == [("findings", pos)] + [
        (n, kw) for n in ("checkpoint_next", "goal_present", "deferred")
    ]
    assert [n for n, _ in _params(brief.resume)][-3:] == ["transcript", "harness", "carried"]
    ref = since.TranscriptRef("p", "claude", "s", 10, "h", 57, "2026-11-29T22:04:26.123Z", "compaction")
    assert (ref.path, ref.size, ref.seq, ref.op) == ("p", 10, 57, "compaction")
    empty = since.Since()
    assert (empty.checkpoint, empty.transcripts, empty.capture, empty.complete) == (None, [], None, False)
    done = proc.Result(1, b"out", b"err")
    assert (done.code, done.out, done.err, done.timed_out, done.missing) == (1, b"out", b"err", False, False)
    assert capture.VERSION == 2


def test_a_capture_shows_as_counts_whatever_its_shape() -> None:
    one = {"v": 1, "todos": {"items": [["a", "pending"]] * 3, "more": 0}, "edited": {"files": ["x"], "more": 1}}
    assert records.capture_counts({**one, "failed": [{}]}) == "3 todos, 2 files edited, 1 failed command"
    assert records.capture_counts({"v": 1, "todos": "x", "edited": None, "failed": 3}) == "nothing captured"
    assert records.capture_counts({"v": 1, "error": "no such\nfile"}) == "not captured: no such file"


def test_a_skipped_check_degrades_the_confidence() -> None:
    ok = Finding("state", "ok", "fine")
    assert checks.confidence([ok]) == "recovered"
    assert checks.confidence([ok, Finding("cursors", "skipped", "could not look")]) == "degraded (cursors)"
    assert checks.confidence([Finding("a", "failed", "x"), Finding("b", "degraded", "y")]) == "degraded (a, b)"


def test_a_checks_context_reads_the_state_and_cannot_write_it(state: State) -> None:
    context = Context(state, state.reconcile(), views={"00_goal.md": "# Goal"})
    assert (context.state.root, context.state.actor) == (state.root, state.actor)  # type: ignore[union-attr]
    assert not hasattr(context.state, "checkpoint")
    with pytest.raises(AttributeError):
        context.state.root = "elsewhere"  # type: ignore[union-attr, misc]
