"""A user's own checks from state/config.json (checks/user.py): loaded by name, each failure its own finding."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rehydrate import checks
from rehydrate.checks import Context, user

USERCHK = """
from rehydrate.checks import Finding

class Green:
    name = "mine"
    def run(self, context):
        return [Finding("mine", "ok", "looked at the fixtures folder")]

class Boom:
    name = "boom"
    def run(self, context):
        raise RuntimeError("no fixtures")

class Odd:
    name = "odd"
    def run(self, context):
        return "fine"

class Impostor:
    name = "state"
    def run(self, context):
        return []

nothing = 3
"""


@pytest.fixture
def userchk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "userchk_i12.py").write_text(USERCHK)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "userchk_i12", raising=False)


def test_each_named_check_runs_in_config_order_and_each_failure_is_its_own_finding(userchk: None) -> None:
    names = ["userchk_i12:Green", "userchk_i12:Boom", "nomod_i12:x", "userchk_i12:Odd", "userchk_i12:Impostor"]
    loaded = user.load({"checks": [*names, "userchk_i12:nothing", "../x:y"]}, {})
    found = checks.run_all(Context(None, None, scope="recover"), loaded)
    got = [(f.check, f.status) for f in found]
    assert got == [
        ("user", "skipped"),
        ("mine", "ok"),
        ("boom", "failed"),
        ("nomod_i12:x", "skipped"),
        ("odd", "failed"),
        ("userchk_i12:Impostor", "failed"),
        ("userchk_i12:nothing", "failed"),
    ]
    assert "could not import nomod_i12:x: ModuleNotFoundError" in found[3].message
    assert found[2].message == "the check raised RuntimeError: no fixtures"
    assert "a built-in check's name" in found[5].message
    assert (
        checks.confidence(found) == "degraded (user, boom, nomod_i12:x, odd, userchk_i12:Impostor, userchk_i12:nothing)"
    )


def test_the_switch_turns_them_off(userchk: None) -> None:
    assert user.load({"checks": ["userchk_i12:Green"]}, {user.OFF: "1"}) == []
    assert len(user.load({"checks": ["userchk_i12:Green"]}, {})) == 1
