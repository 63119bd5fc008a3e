"""Tests mirror src: `tests/store/wal/test_scan.py` tests `src/rehydrate/store/wal/scan.py`, and a package's
`__init__.py` is tested by `test_<package>.py` in its folder (`tests/brief/test_brief.py`; the top package's by
`tests/test_rehydrate.py`). A module may have more test files beside its own, each named `test_<module>_<topic>.py`.

So a new test has one obvious home, and a module without tests shows here. The suites that cross modules on purpose
sit apart (SUITES), as do the tests of the repository itself (REPOSITORY)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rehydrate"
TESTS = ROOT / "tests"

# Folders of tests that cross modules on purpose: fault injection, real harnesses, scenarios, git round trips.
SUITES = ("faults", "e2e", "scenarios", "git", "fakes")
# Tests of the repository rather than of a module: its measures, its comments, its layout, its benchmarks.
REPOSITORY = (
    "test_house.py",
    "test_no_history_comments.py",
    "test_mirror.py",
    "test_bench.py",
    "test_bench_transcripts.py",
    "test_docs.py",
)
# Modules with no test file of their own, and where they are tested instead.
ELSEWHERE: dict[str, str] = {}


def own_test(module: Path) -> Path:
    rel = module.relative_to(SRC)
    if rel.name == "__init__.py":
        name = rel.parent.name or "rehydrate"
        return TESTS / rel.parent / f"test_{name}.py"
    return TESTS / rel.parent / f"test_{rel.stem}.py"


def dotted(module: Path) -> str:
    rel = module.relative_to(SRC).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts) or "rehydrate"


def modules() -> list[Path]:
    """Every module that holds code: a package whose __init__.py is only its docstring has nothing to test."""
    return sorted(m for m in SRC.rglob("*.py") if not _only_a_docstring(m))


def _only_a_docstring(module: Path) -> bool:
    body = ast.parse(module.read_text()).body
    return len(body) <= 1 and all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in body)


def test_every_module_has_its_own_test_file() -> None:
    missing = [
        f"{dotted(m)}: {own_test(m).relative_to(ROOT)}"
        for m in modules()
        if dotted(m) not in ELSEWHERE and not own_test(m).is_file()
    ]
    assert missing == [], "modules without their own test file:\n" + "\n".join(missing)


def test_every_test_file_is_named_after_a_module_beside_it() -> None:
    owners: dict[Path, set[str]] = {}
    for m in modules():
        t = own_test(m)
        owners.setdefault(t.parent, set()).add(t.stem)
    strays = []
    for t in sorted(TESTS.rglob("test_*.py")):
        rel = t.relative_to(TESTS)
        if rel.parts[0] in SUITES or (len(rel.parts) == 1 and rel.name in REPOSITORY):
            continue
        names = owners.get(t.parent, set())
        if not any(t.stem == n or t.stem.startswith(n + "_") for n in names):
            strays.append(str(t.relative_to(ROOT)))
    assert strays == [], "test files named after no module in the folder they mirror:\n" + "\n".join(strays)


def test_the_exceptions_name_modules_that_exist() -> None:
    assert set(ELSEWHERE) <= {dotted(m) for m in modules()}
