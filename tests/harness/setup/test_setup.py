"""harness/setup/__init__.py: the set-up steps `init` and the demo print name commands and harnesses that exist, in
the README's quickstart order."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from rehydrate.cli import COMMANDS
from rehydrate.harness import TARGETS
from rehydrate.harness.setup import NEXT_STEPS

README = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")


def test_each_step_runs_a_command_that_exists_and_names_every_harness_install_knows() -> None:
    for step in NEXT_STEPS:
        words = shlex.split(step.split("#")[0])
        assert words[0] in ("rehydrate", "git"), step
        if words[0] == "rehydrate":
            assert words[1] in COMMANDS, step
    named = re.findall(r"[a-z]+", NEXT_STEPS[1].split("#")[1])
    assert set(TARGETS) - {"mcp"} <= {"claude", *named}, NEXT_STEPS[1]


def test_the_steps_follow_the_readme_s_quickstart() -> None:
    block = README[README.index("## Quickstart in your own project") :]
    block = block[block.index("```sh\n") + 6 :]
    quickstart = [line.split()[:3] for line in block[: block.index("```")].splitlines() if line.strip()]
    assert [shlex.split(s.split("#")[0])[:3] for s in NEXT_STEPS[: len(quickstart)]][1:] == quickstart[1:]
