"""store/config.py: state/config.json is read as an object or ignored, and each setting is clamped or refused."""

from __future__ import annotations

import math
from pathlib import Path

from rehydrate.store import config


def test_config_json_is_an_object_or_nothing(tmp_path: Path) -> None:
    assert config.read(str(tmp_path)) == {}
    (tmp_path / "config.json").write_text('{"gh_timeout": 3}')
    assert config.read(str(tmp_path)) == {"gh_timeout": 3}
    for bad in ("[1, 2]", "{not json", "x" * (config.MAX_CONFIG + 1)):
        (tmp_path / "config.json").write_text(bad)
        assert config.read(str(tmp_path)) == {}


def test_gh_timeout_is_clamped_and_defaults_on_anything_else() -> None:
    assert config.gh_timeout({}) == 8.0
    assert config.gh_timeout({"gh_timeout": 3}) == 3.0
    assert config.gh_timeout({"gh_timeout": 0.2}) == 1.0
    assert config.gh_timeout({"gh_timeout": math.inf}) == 60.0
    assert config.gh_timeout({"gh_timeout": math.nan}) == 8.0
    assert config.gh_timeout({"gh_timeout": True}) == 8.0
    assert config.gh_timeout({"gh_timeout": "5"}) == 8.0


def test_user_checks_are_module_attr_names_at_most_eight() -> None:
    assert config.user_checks({}) == ([], [])
    assert config.user_checks({"checks": "a:b"}) == ([], ["config.json's checks is not a list of module:attr names"])
    names, refused = config.user_checks({"checks": ["pkg.mod:Check", "../x.py", "os:system()", 5]})
    assert names == ["pkg.mod:Check"]
    assert refused == [
        "'../x.py' is not a module:attr name",
        "'os:system()' is not a module:attr name",
        "'5' is not a module:attr name",
    ]
    names, refused = config.user_checks({"checks": [f"m{n}:C" for n in range(10)]})
    assert names == [f"m{n}:C" for n in range(8)]
    assert refused == ["m8:C: more than 8 user checks, not run", "m9:C: more than 8 user checks, not run"]
