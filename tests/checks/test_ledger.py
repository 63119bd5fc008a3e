"""The ledger's semantics (checks/ledger.summarize): the verdict, the one next safe action chosen by
code in ledger order, and the single question for a human when nothing gives a step."""

from __future__ import annotations

from rehydrate.checks import Finding, ledger

STEP = "binding powers"
REPAIR = "run `rehydrate cursor repair OUTPUT PROGRESS` before going on with the pipeline"


def test_recovered_only_when_every_check_that_applies_is_ok() -> None:
    findings = [
        Finding("identity", "ok", "actor agent; goal: g"),
        Finding("handoff", "n/a", "no handoff note (state/20_handoff.md absent)"),
        Finding("cursors", "n/a", "no pipeline registered (state/pipelines.json absent)"),
    ]
    summed = ledger.summarize(findings, checkpoint_next=STEP, goal_present=True)
    assert (summed.confidence, summed.degraded, summed.next, summed.ask) == ("recovered", [], STEP, None)
    assert summed.recovered


def test_degraded_names_each_lowering_check_once_in_ledger_order() -> None:
    findings = [
        Finding("handoff", "degraded", "predates checkpoint 4", "read it as background"),
        Finding("recency", "skipped", "the transcript is gone"),
        Finding("cursors", "failed", "the check raised OSError: x"),
        Finding("cursors", "degraded", "pass B: cursor ahead", REPAIR),
        Finding("direction", "n/a", "no main line"),
    ]
    summed = ledger.summarize(findings, checkpoint_next=STEP, goal_present=True)
    assert summed.degraded == ["handoff", "recency", "cursors"]
    assert summed.confidence == "degraded (handoff, recency, cursors)"


def test_a_skipped_finding_lowers_the_confidence_but_never_sets_the_next_action() -> None:
    skipped = Finding("recency", "skipped", "the transcript is gone", "run `rehydrate recover --transcript PATH`")
    summed = ledger.summarize([skipped], checkpoint_next=STEP, goal_present=True)
    assert (summed.confidence, summed.next, summed.ask) == ("degraded (recency)", STEP, None)
    assert summed.as_json()["checks"][0]["next"] == skipped.next_action  # its own next stays on its line


def test_the_first_contradicting_finding_with_a_next_sets_it_before_the_checkpoint() -> None:
    findings = [
        Finding("state", "ok", "log and views agree"),
        Finding("handoff", "degraded", "predates checkpoint 4"),  # no next of its own: the next one's counts
        Finding("recency", "skipped", "gone", "look elsewhere"),
        Finding("live-state", "degraded", "3 commits since", "read the 3 commits since the checkpoint"),
        Finding("cursors", "degraded", "pass B: cursor ahead", REPAIR),
    ]
    summed = ledger.summarize(findings, checkpoint_next=STEP, goal_present=True)
    assert summed.next == "read the 3 commits since the checkpoint" and summed.ask is None


def test_without_a_checkpoint_the_goal_gives_the_first_step_and_without_either_one_fact_is_asked() -> None:
    ok = [Finding("state", "ok", "fine")]
    assert ledger.summarize(ok, checkpoint_next=None, goal_present=True).next == ledger.GOAL_FIRST
    asking = ledger.summarize(ok, checkpoint_next=None, goal_present=False)
    assert (asking.next, asking.ask) == (None, ledger.ASK_TASK)
    assert asking.as_json()["next"] == "stop and ask: " + ledger.ASK_TASK
    # a skipped finding's next never answers the question
    skipped = [Finding("recency", "skipped", "gone", "look elsewhere")]
    assert ledger.summarize(skipped, checkpoint_next=None, goal_present=False).next is None


def test_the_ask_is_the_contradicting_findings_own_then_identitys() -> None:
    own = Finding("state", "failed", "the state did not load", ask="Which branch holds the state?")
    who = Finding("identity", "degraded", "goal missing", ask="What is the task? (identity)")
    summed = ledger.summarize([who, own], checkpoint_next=None, goal_present=False)
    assert summed.ask == "What is the task? (identity)"  # the first contradicting finding's ask
    summed = ledger.summarize([Finding("identity", "ok", "fine", ask="Q?")], checkpoint_next=None, goal_present=False)
    assert summed.ask == "Q?"  # identity's, though it is ok
    summed = ledger.summarize([own], checkpoint_next=STEP, goal_present=False)
    assert (summed.next, summed.ask) == (STEP, None)  # a step exists: nothing is asked


def test_the_deferred_note_names_what_hook_scope_left_to_recover() -> None:
    none = ledger.summarize([], checkpoint_next=STEP, goal_present=True)
    assert none.deferred is None
    note = ledger.summarize([], checkpoint_next=STEP, goal_present=True, deferred=["PR and CI (gh)", "1 user check"])
    assert note.deferred == "not run at session start: PR and CI (gh), 1 user check: `rehydrate recover` runs them"


def test_an_old_handoffs_step_yields_to_what_happened_since_the_checkpoint() -> None:
    """handoff comes before recency in the ledger, but its step (the old note as background, then the checkpoint's
    next) must not hide recency's: the checkpoint's next step was edited after it."""
    note = Finding("handoff", "degraded", "predates checkpoint 4", f"read it as background, then go on with {STEP}")
    work = Finding("recency", "degraded", "calc/parser.py edited", "check calc/parser.py before redoing it")
    summed = ledger.summarize([note, work], checkpoint_next=STEP, goal_present=True)
    assert summed.next == "check calc/parser.py before redoing it" and summed.degraded == ["handoff", "recency"]
    alone = ledger.summarize([note], checkpoint_next=STEP, goal_present=True)
    assert alone.next == f"read it as background, then go on with {STEP}"
