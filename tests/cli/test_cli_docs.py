"""The documentation against the code: every command has help text and a section in docs/commands.md, and every
section shows each option and choice of its command (like sqlite-utils' tests/test_docs.py); what it says of the
shared options is true; the ledger's and the harnesses' pages name what the code does. The README stays short and
gives no stale advice. The licence and the package metadata."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate.cli import COMMANDS, build_parser

ROOT = Path(__file__).parent.parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
COMMANDS_PAGE = (DOCS / "commands.md").read_text(encoding="utf-8")
SHARED = re.search(r"The commands that work on a state folder \(([^)]*)\) take `--dir DIR`", COMMANDS_PAGE)


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _section(name: str) -> str:
    title = "## invariant and reject" if name in ("invariant", "reject") else f"## {name}"
    assert title + "\n" in COMMANDS_PAGE, f"docs/commands.md has no section {title!r}"
    start = COMMANDS_PAGE.index(title + "\n")
    nxt = re.compile(r"^##? ", re.M).search(COMMANDS_PAGE, start + len(title))
    return COMMANDS_PAGE[start : nxt.start() if nxt else len(COMMANDS_PAGE)]


def _shared() -> set[str]:
    assert SHARED, "docs/commands.md's sentence on the shared options is gone"
    return set(re.findall(r"`([a-z]+)`", SHARED.group(1)))


def test_every_command_has_help_text() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    assert set(helps) == set(COMMANDS) == set(sub.choices)
    top = rehydrate("--help").out
    for name, parser in sub.choices.items():
        assert helps[name] and len(helps[name]) > 20, name
        assert parser.description and len(parser.description) > 40, name
        assert re.search(rf"^\s+{name}\s", top, re.M), f"{name} is not listed by rehydrate --help"
        for action in parser._actions:
            if "-h" not in action.option_strings:
                assert action.help, f"rehydrate {name}: {action.option_strings or action.dest} has no help text"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_is_documented_with_each_option_and_choice(name: str) -> None:
    text = _section(name)
    assert re.search(rf"^rehydrate {name}\b", text, re.M) or f"| rehydrate {name}" in text, (
        f"the {name} section shows no `rehydrate {name}` line"
    )
    exempt = {"--dir", "--actor"} if name in _shared() else set()
    for action in _subparsers()[name]._actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        if "--help" in longs:
            continue
        for option in longs[-1:]:
            if option not in exempt:
                assert re.search(rf"{re.escape(option)}\b", text), f"docs/commands.md's {name} omits {option}"
        for choice in action.choices or ():
            if isinstance(choice, str):
                assert re.search(rf"\b{re.escape(choice)}\b", text), f"docs/commands.md's {name} omits {choice!r}"


def test_what_the_commands_page_says_of_the_shared_options_is_true() -> None:
    parsers = _subparsers()
    shared = _shared()
    assert shared <= set(COMMANDS)

    def writes_as_actor(parser: argparse.ArgumentParser) -> bool:
        opts = {o: a for a in parser._actions for o in a.option_strings}
        return "--dir" in opts and "--actor" in opts and opts["--actor"].help.startswith("whose WAL")  # type: ignore[union-attr]

    assert shared == {n for n, p in parsers.items() if writes_as_actor(p)}
    sentence = COMMANDS_PAGE[SHARED.end() : COMMANDS_PAGE.index("`rehydrate COMMAND --help` describes each")]  # type: ignore[union-attr]
    neither = re.search(
        r"`hook`,\s+`install`,\s+`uninstall`,\s+`audit`,\s+`demo` and\s+`completion` take neither", sentence
    )
    assert neither
    for name in ("hook", "install", "uninstall", "audit", "demo", "completion"):
        opts = {o for a in parsers[name]._actions for o in a.option_strings}
        assert not {"--dir", "--actor"} & opts, name
    for name, parser in parsers.items():  # every command that takes --json shows it in its synopsis
        if any("--json" in a.option_strings for a in parser._actions):
            assert "--json" in _section(name), name


def test_no_stale_or_unpublished_install_advice() -> None:
    cli = sorted((ROOT / "src" / "rehydrate" / "cli").glob("*.py"))
    assert {p.name for p in cli} >= {"__init__.py", "demo.py"} and len(cli) > 2  # every module of the cli package
    pages = [(f"docs/{p.name}", p.read_text(encoding="utf-8")) for p in sorted(DOCS.glob("*.md"))]
    marketplace = ROOT / ".claude-plugin" / "marketplace.json"
    texts = [("README.md", README), (".claude-plugin/marketplace.json", marketplace.read_text(encoding="utf-8"))]
    for where, text in (*texts, *pages, *((f"cli/{p.name}", p.read_text(encoding="utf-8")) for p in cli)):
        assert not re.search(r"pipx? install '?rehydrate\b", text), f"{where} installs rehydrate from an index"
        assert "comes next" not in text, where
        assert "content-hash" not in text, where
    for where, text in (*texts, *pages):
        assert "updates the block in\nplace" not in text and "rule step again" not in text, where
        assert not re.search(r"every command takes `--dir", text, re.I), where


def test_the_licence_and_the_package_metadata() -> None:
    tomllib = pytest.importorskip("tomllib")
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n") and "Copyright (c) 2026 rehydrate developers" in licence
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in licence
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert {"name": "rehydrate developers"} in project["authors"]
    assert project["readme"] == "README.md" and project["requires-python"] and project["keywords"]
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]  # the SPDX expression says it
    assert "Development Status :: 3 - Alpha" in project["classifiers"]


def _ledger_section() -> str:
    """The recovery ledger's page (docs/ledger.md)."""
    return (DOCS / "ledger.md").read_text(encoding="utf-8")


def test_the_recovery_ledger_page_names_every_check_in_order_and_every_status() -> None:
    from rehydrate.checks import _MODULES, ORDER, STATUSES
    from rehydrate.checks.ledger import GOAL_FIRST

    text = _ledger_section()
    first = text[text.index("\n| check |") :].split("\n\n")[0]  # the order table
    cells = [row.split("|")[1] for row in first.split("\n") if row.startswith("| ")]
    table = [n for cell in cells for n in re.findall(r"`([a-z-]+)`", cell) if n in ORDER]
    assert table == list(ORDER), "the order table differs from checks.ORDER"
    titles = re.findall(r"^### ([a-z-]+)$", text, re.M)
    assert titles == [n for n in ORDER if n in _MODULES], "a built-in check has no sub-section, or not in order"
    for status in STATUSES:
        assert re.search(rf"^\| `{re.escape(status)}` \|", text, re.M), f"the status table omits {status}"
    flat = " ".join(text.split())
    assert GOAL_FIRST in flat and "ask a human:" in flat and "not run at session start:" in flat
    for title in ("## The checks", "## Capture at compaction", "## Your own checks"):
        assert f"\n{title}\n" in text, title


def test_the_recovery_ledger_page_states_the_real_bounds_and_switches() -> None:
    from rehydrate.checks import recency, user
    from rehydrate.checks.git import probe
    from rehydrate.harness.compaction import capture
    from rehydrate.store import config

    text = " ".join(_ledger_section().split())
    mib = 1 << 20
    assert f"its last {recency.HOOK_BYTES // mib} MiB at most | its last {recency.RECOVER_BYTES // mib} MiB" in text
    assert f"| each git call | {probe.HOOK_DEADLINE:g} s | {probe.RECOVER_DEADLINE:g} s |" in text
    gh = f'{{"gh_timeout": {config.GH_TIMEOUT:g}}}'
    assert gh in text and f"{config.GH_TIMEOUT:g} when unset" in text
    assert f"between {config.GH_TIMEOUT_MIN:g} and {config.GH_TIMEOUT_MAX:g}" in text
    assert f"at most its last {capture.MAX_READ // mib} MiB" in text
    assert f"at most {capture.MAX_TOTAL >> 10} KiB of JSON" in text
    assert f"up to {capture.MAX_TODOS} items of {capture.MAX_TODO} characters" in text
    assert f"the last {capture.MAX_USER} things the user said, verbatim ({capture.MAX_USER_TEXT:,} characters" in text
    assert f"the lines of its output that say what failed ({capture.MAX_ERROR} characters" in text
    assert f"the last {capture.MAX_EDITED} paths" in text and f"the last {capture.MAX_FAILED} commands" in text
    assert f"the last assistant message ({capture.MAX_ASSISTANT:,} characters)" in text
    assert f"(up to {user.project.MAX_USER_CHECKS})" in text and user.OFF + "=1" in text
    for switch in ('{"capture": false}', '{"capture_user": false}', '{"checks": ["'):
        assert switch in text, switch


HARNESS_SECTIONS = {
    "claude": "Claude Code",
    "codex": "Codex CLI",
    "gemini": "Gemini CLI",
    "copilot": "GitHub Copilot CLI",
    "cursor": "Cursor",
    "qwen": "Qwen Code",
}


@pytest.mark.parametrize("name", sorted(HARNESS_SECTIONS))
def test_each_harness_s_event_table_names_exactly_the_events_install_writes(name: str) -> None:
    """docs/harnesses.md's table of what each hook event does, per harness, against the registry: every event
    `install` writes for it has a row, and no row names an event it does not write (the table cannot drift)."""
    import re

    from rehydrate import harness

    assert set(HARNESS_SECTIONS) == set(harness.HOOKS)  # a harness with hooks has its section
    text = (DOCS / "harnesses.md").read_text()
    section = text.split(f"\n## {HARNESS_SECTIONS[name]}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.split("\n") if line.startswith("| `")]
    named = {event for row in rows for event in re.findall(r"`([A-Za-z]+)`", row.split(" | ")[0])}
    installed = set(harness.get(name).hook_groups("rehydrate hook " + name))
    assert named == installed, (named - installed, installed - named)
    handled = {event for event, what in harness.get(name).EVENTS.items() if what}
    assert installed <= handled  # every event written is one the hook answers
