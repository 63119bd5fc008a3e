"""The public Python API: every name in `rehydrate.__all__` resolves, is documented in docs/api.md, and loads lazily;
the page's example runs as printed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import rehydrate

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", API_PAGE.read_text(), flags=re.S)


def test_every_public_name_resolves_and_has_a_section_on_the_api_page() -> None:
    headings = re.findall(r"^## (.+)$", API_PAGE.read_text(), flags=re.M)
    documented = set(re.findall(r"`([A-Za-z_]+)`", " ".join(headings)))
    for name in rehydrate.__all__:
        value = getattr(rehydrate, name)
        assert name.startswith("__") or name == "JSON_VERSION" or value.__module__.startswith("rehydrate."), name
        assert name in documented, f"{name} is public but docs/api.md has no section for it"
    assert documented <= set(rehydrate.__all__), "docs/api.md documents a name that is not public"
    assert sorted(dir(rehydrate)) == sorted(rehydrate.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        rehydrate.store_state  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as e:
        assert "store_state" in str(e)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_the_package_loads_nothing_else_and_a_name_loads_only_its_part() -> None:
    code = (
        "import sys, rehydrate\n"
        "print(sorted(m for m in sys.modules if m.startswith('rehydrate')))\n"
        "rehydrate.State\n"
        "print(any(m.startswith('rehydrate.brief') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['rehydrate']", "False"]


def test_the_pages_example_prints_what_the_page_says(tmp_path: Path) -> None:
    (example,) = blocks("python")
    (printed,) = blocks("text")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "start"],
        cwd=tmp_path,
        check=True,
    )
    # the package as this interpreter finds it (installed, or on PYTHONPATH), nothing else of this environment
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "REHYDRATE_ACTOR": "agent"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    run = subprocess.run(
        [sys.executable, "-c", example], check=False, cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == printed
