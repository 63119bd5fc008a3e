"""sync/remote.py: the upstream's names, and a sync's report as JSON fields."""

from __future__ import annotations

from rehydrate.sync.remote import Report, Upstream


def test_an_upstream_is_named_by_its_tracking_ref() -> None:
    assert Upstream("origin", "refs/heads/main", "refs/remotes/origin/main").name == "origin/main"
    assert Upstream("origin", "refs/heads/main", "refs/tracking/x").name == "origin/main"


def test_a_report_gives_its_fields_and_the_dry_runs_counts_only_when_dry() -> None:
    report = Report()
    report.say("nothing to commit")
    assert report.lines == ["nothing to commit"]
    fields = {
        "committed": None,
        "paths": [],
        "pulled": 0,
        "pushed": None,
        "attempts": 0,
        "forced_push": None,
        "stopped": None,
    }
    assert report.as_dict() == fields
    dry = Report(dry_run=True)
    dry.ahead, dry.behind = 2, 1
    assert dry.as_dict() == {**fields, "dry_run": True, "ahead": 2, "behind": 1}
