"""store/layout.py: the names of the state folder's files and actors, and the lines of 10_invariants.md."""

from __future__ import annotations

import os
from pathlib import Path

from rehydrate.store import layout


def test_actor_and_view_names() -> None:
    assert layout.is_actor("agent") and layout.is_actor("a" * 64) and layout.is_actor("tess-2.b_c")
    for bad in ("", "a" * 65, "-lead", ".hidden", "a/b", "é"):
        assert not layout.is_actor(bad), bad
    assert layout.is_extra_view("40_notes.md") and not layout.is_extra_view("4_notes.md")
    assert layout.is_own("99_next.md") and layout.is_own("wal") and layout.is_own("40_notes.md")
    assert not layout.is_own("notes.txt")
    assert layout.view_kind("next/tess.md") == layout.NEXT == "99_next.md"
    assert layout.view_kind("handoff/tess.md") == layout.HANDOFF
    assert layout.view_kind("tasks/tess.md") == layout.TASKS
    assert layout.view_kind("00_goal.md") == "00_goal.md"
    assert layout.tasks_view(layout.NEXT) == "30_tasks.md"
    assert layout.tasks_view("next/tess.md") == "tasks/tess.md"


def test_an_entry_line_gives_back_its_id_and_its_guard() -> None:
    line = layout.entry_line("R", "R-91be04", "2026-11-29", "Edit db/schema.sql", "migrations", "db/*.sql", "DROP")
    assert (
        line == "- R-91be04 2026-11-29 rejected: Edit db/schema.sql because: migrations guard: db/*.sql contains: DROP"
    )
    assert layout.entry_id(line) == "R-91be04"
    assert layout.entry_guard(line) == ("db/*.sql", "DROP")
    decision = layout.entry_line("D", "D-0a1b2c", "2026-11-29", "Use sqlite", "one file", None)
    assert decision == "- D-0a1b2c 2026-11-29 decision: Use sqlite because: one file"
    assert layout.entry_guard(decision) == (None, None)
    for not_one in ("- X-0a1b2c 2026", "- D-0A1B2C 2026", "* D-0a1b2c 2026", "- D-0a1b2c"):
        assert layout.entry_id(not_one) is None, not_one


def test_the_set_up_files_are_what_each_install_writes_in_a_project(tmp_path: Path) -> None:
    """live-state passes over layout.SETUP_FILES as rehydrate's own: exactly the files `install` (each harness, and
    the MCP entries) and `init --rules` write in a project."""
    from rehydrate.harness.setup import install, rules
    from rehydrate.harness.setup.install import registry

    written = set(rules.FILES.values())
    for name in registry.TARGETS:
        for target in install.targets(name, str(tmp_path), "state", False):
            written.add(os.path.relpath(target[0], tmp_path).replace(os.sep, "/"))
    assert written == set(layout.SETUP_FILES)
