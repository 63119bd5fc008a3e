"""state/config.json read once and validated key by key (store/config.py): a pulled config cannot crash a command
nor push a bound out of range."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rehydrate.harness import base
from rehydrate.store import config


def test_read_gives_the_object_or_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    assert config.read(str(tmp_path)) == {}
    path.write_text('{"guard": "deny", "checks": ["a:b"]}')
    assert config.read(str(tmp_path)) == {"guard": "deny", "checks": ["a:b"]}
    assert base.config(str(tmp_path)) == config.read(str(tmp_path))  # the hooks read it through here
    for bad in ("[1, 2]", "{not json", " " * (config.MAX_CONFIG + 1)):
        path.write_text(bad)
        assert config.read(str(tmp_path)) == {}, bad
    path.unlink()
    os.mkfifo(path)  # never blocks on a FIFO
    assert config.read(str(tmp_path)) == {}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 8.0),
        (3, 3.0),
        (2.5, 2.5),
        (0, 1.0),
        (-4, 1.0),
        (600, 60.0),
        (float("inf"), 60.0),
        (float("nan"), 8.0),
        (True, 8.0),
        ("5", 8.0),
    ],
)
def test_gh_timeout_is_clamped(value: object, expected: float) -> None:
    cfg = {} if value is None else {"gh_timeout": value}
    assert config.gh_timeout(cfg) == expected


def test_user_checks_are_module_attr_names_at_most_eight() -> None:
    assert config.user_checks({}) == ([], [])
    assert config.user_checks({"checks": "mine:Check"}) == (
        [],
        ["config.json's checks is not a list of module:attr names"],
    )
    names, refused = config.user_checks(
        {
            "checks": [
                "userchk:Green",
                "pkg.sub:mod.Attr",
                "../x:y",
                "os:system()",
                7,
                "nocolon",
                *(f"m{i}:C" for i in range(8)),
            ]
        }
    )
    assert names == ["userchk:Green", "pkg.sub:mod.Attr", *(f"m{i}:C" for i in range(6))]
    assert len(refused) == 6 and refused[0] == "'../x:y' is not a module:attr name"
    assert refused[-1] == "m7:C: more than 8 user checks, not run"
