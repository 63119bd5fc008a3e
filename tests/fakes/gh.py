"""A fake `gh` on a test's own PATH (see tests/fakes/__init__.py): canned answers, argv logged, never a network."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

_SCRIPT = """\
import json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "gh.calls"), "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
seen = {k: v for k, v in os.environ.items() if k.startswith(("GH_", "NO_COLOR"))}
stdin_null = os.fstat(0).st_rdev == os.stat(os.devnull).st_rdev
with open(os.path.join(here, "gh.env"), "a") as log:
    log.write(json.dumps({"env": seen, "cwd": os.getcwd(), "stdin_null": stdin_null}) + "\\n")
with open(os.path.join(here, "gh.json")) as f:
    canned = json.load(f)
if canned["hang"]:
    with open(os.path.join(here, "gh.pid"), "w") as f:
        f.write(str(os.getpid()))
    time.sleep(3600)
args = sys.argv[1:]
if args[:2] == ["auth", "status"]:
    if not canned["auth"]:
        sys.stderr.write("You are not logged into any GitHub hosts. To log in, run: gh auth login\\n")
        sys.exit(4)
    sys.stdout.write("github.com\\n  Logged in to github.com account agent\\n")
    sys.exit(0)
if not canned["auth"]:
    sys.stderr.write("To get started with GitHub CLI, please run:  gh auth login\\n")
    sys.exit(4)
if args[:2] == ["pr", "view"] and canned.get("raw") is not None:
    sys.stdout.write(canned["raw"])
    sys.exit(0)
if args[:2] == ["pr", "view"]:
    rest = args[2:]
    number = rest[0] if rest and not rest[0].startswith("-") else None
    pr = canned["prs"].get(number) if number else canned["current"]
    if pr is None:
        what = f"pull request #{number}" if number else "pull requests found for branch"
        sys.stderr.write(f"no {what}\\n" if not number else f"GraphQL: Could not resolve to a PullRequest ({what})\\n")
        sys.exit(1)
    fields = rest[rest.index("--json") + 1].split(",") if "--json" in rest else list(pr)
    sys.stdout.write(json.dumps({k: pr.get(k) for k in fields}) + "\\n")
    sys.exit(0)
sys.stderr.write(f"unknown command {args!r} for the fake gh\\n")
sys.exit(1)
"""


def install_fake_gh(
    bin_dir: Path,
    *,
    auth: bool = True,
    current: dict[str, Any] | None = None,
    prs: dict[str, dict[str, Any]] | None = None,
    hang: bool = False,
    raw: str | None = None,
) -> Path:
    """Writes bin_dir/gh and its canned answers bin_dir/gh.json (see tests/fakes/__init__.py); gives the script.
    raw: printed as it is (exit 0) for every `pr view`, to feed the check hostile or broken output."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    canned = {"auth": auth, "current": current, "prs": prs or {}, "hang": hang, "raw": raw}
    (bin_dir / "gh.json").write_text(json.dumps(canned))
    script = bin_dir / "gh"
    script.write_text(f"#!{sys.executable}\n{_SCRIPT}")
    script.chmod(0o755)
    return script


def calls(bin_dir: Path) -> list[list[str]]:
    """Every argv the fake gh was run with, in order."""
    log = bin_dir / "gh.calls"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def seen(bin_dir: Path) -> list[dict[str, Any]]:
    """What each run of the fake gh saw: {"env": its GH_* and NO_COLOR variables, "cwd", "stdin_null"}."""
    log = bin_dir / "gh.env"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def bin_path(tmp: Path, gh: str | None = None, **canned: Any) -> str:
    """A PATH of one new folder holding a `git` symlink to the real git and, when gh == "fake", the fake gh (canned:
    install_fake_gh's keywords); so no real gh is reachable. Tests also drop GH_TOKEN and GITHUB_TOKEN."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    real = shutil.which("git")
    assert real is not None, "git is needed by the recovery tests"
    if not (bin_dir / "git").exists():
        os.symlink(real, bin_dir / "git")
    if gh == "fake":
        install_fake_gh(bin_dir, **canned)
    return str(bin_dir)
