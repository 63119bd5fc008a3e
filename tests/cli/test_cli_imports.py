"""The hook path stays light: running `checkpoint`, `resume` and `hook` imports only the standard library (and
`verify` nothing but orjson, a dependency, for a whole log)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

import rehydrate as rehydrate_package
from conftest import rehydrate
from rehydrate.cli import COMMANDS

PROBE = r"""
import sys
from rehydrate.cli import main
code = main(sys.argv[1:])
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""
SRC = str(Path(rehydrate_package.__file__).resolve().parent.parent)  # the checkout's src (an editable install)
# where the dependencies are installed (orjson's folder): on the probe's path, so that an import of one is seen
SITE = str(Path(orjson.__file__).resolve().parent.parent)


def _modules(cwd: Path, *argv: str, event: str | None = None) -> list[str]:
    event = event or json.dumps({"hook_event_name": "SessionStart", "source": "compact", "cwd": str(cwd)})
    # -S: no site, whose .pth files (an editable install's finder, setuptools' hack) load re and more before main;
    # PYTHONPATH finds this checkout instead, then the installed dependencies (their .pth files not run): a module
    # that tries one (orjson, tomlkit) finds it, and the test sees it
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((SRC, SITE))}
    r = subprocess.run(
        [sys.executable, "-S", "-c", PROBE, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        input=event,
        env=env,
    )
    return r.stderr.strip().splitlines()[-1].split()


MAIN_PROBE = r"""
import sys
from rehydrate.__main__ import hook
code = hook(sys.argv[2:])
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


def _called(cwd: Path, harness: str, event: dict[str, Any]) -> set[str]:
    """The modules `rehydrate hook HARNESS` loads as the script runs it (rehydrate.__main__), its input all written
    before the process starts (a pipe written whole and closed, as a harness does): no wait, so no select."""
    r, w = os.pipe()
    os.write(w, json.dumps(event).encode())
    os.close(w)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((SRC, SITE))}
    try:
        p = subprocess.run(
            [sys.executable, "-S", "-c", MAIN_PROBE, "hook", *harness.split()],
            cwd=cwd, stdin=r, capture_output=True, text=True, check=True, env=env,
        )  # fmt: skip
    finally:
        os.close(r)
    return set(p.stderr.strip().splitlines()[-1].split())


def test_hook_path_imports_only_the_standard_library(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    stdlib = set(sys.stdlib_module_names)
    for argv in (["checkpoint", "--done", "a", "--next", "b"], ["resume"], ["verify"], ["hook", "claude"]):
        mods = _modules(repo, *argv)
        foreign = {m.split(".")[0] for m in mods} - stdlib - {"rehydrate", "__main__", "_distutils_hack"}
        assert not foreign - ({"orjson"} if argv[0] == "verify" else set()), (argv, foreign)
        assert not {"asyncio", "email", "http", "ssl", "sqlite3", "xml", "logging"} & set(mods), argv
        assert "rehydrate.cli.demo" not in mods and "rehydrate.harness.setup.rules" not in mods
        cli = {m for m in mods if m.startswith("rehydrate.cli.")}
        # `hook HARNESS` has nothing to parse; checkpoint and resume as hooks and agents write them are read by
        # cli.fast_args (tests/cli/test_cli_fast_args.py): argparse reads the rest
        parser = set() if argv[0] in ("hook", "checkpoint", "resume") else {"rehydrate.cli.parser"}
        assert cli == {f"rehydrate.cli.{COMMANDS[argv[0]][0]}", *parser}, (argv, cli)  # the invoked command's module
        if argv[0] in ("hook", "checkpoint", "resume"):  # argparse loads re, gettext and (translating) locale
            assert not {"argparse", "gettext", "locale"} & set(mods), argv
        if argv[0] in ("checkpoint", "resume", "hook"):  # what bench/startup.py showed costs the hook path its budget
            heavy = {"typing", "dataclasses", "inspect", "subprocess", "contextlib", "_hashlib", "shutil", "signal"}
            # json loads re and enum (about as long as the interpreter's start): safejson calls json's C accelerator;
            # re (and with it enum, functools, collections) is not loaded by the brief, the views or the WAL either
            heavy |= {"json", "json.decoder", "json.encoder", "re", "enum", "functools", "collections"}
            heavy.add("unicodedata")  # text.clean decides with str.isprintable: no Unicode database to load
            heavy.add("rehydrate.store.latches.latch")  # 00 and 10 as the last record binds them: no line to check
            # each module costs the time to find and load it: what this state (no claim, stamp, task list, remote,
            # rollback or rotate) never calls is not loaded, and a read loads none of the write path
            heavy |= {"rehydrate.checks.claims", "rehydrate.checks.git.config", "rehydrate.store.tasks"}
            heavy |= {"rehydrate.store.evidence.paths", "rehydrate.store.local.rollback", "rehydrate.fs.create"}
            heavy |= {"rehydrate.store.wal.graph", "rehydrate.store.wal.scan"}  # one line of work, as left
            heavy.add("rehydrate.harness.compaction.marks")  # GitHub Copilot CLI's prompts and tool results read them
            # gh runs in recover only (a hook says whether it is on PATH), and no compaction was captured here
            heavy |= {"rehydrate.checks.git.gh", "rehydrate.brief.capture"}
            if argv[0] != "checkpoint":
                heavy |= {"rehydrate.store.write", "rehydrate.store.evidence.prepare"}
            else:
                heavy |= {"rehydrate.store.write.create"}  # init's alone
            assert not heavy & set(mods), (argv, heavy & set(mods))
            # no pipeline is registered here: the brief's pipeline check loads nothing of the pipelines
            assert not {m for m in mods if m.startswith("rehydrate.cursor.")}, argv


def test_a_registered_pipeline_is_checked_without_loading_the_pipeline(repo: Path) -> None:
    """The brief's pipeline check reads the registry and the outputs' tails: it loads neither the pipeline nor its
    lock (the writer's side), on resume as on the hook."""
    assert rehydrate("init", "--goal", "g").code == 0
    (repo / "out.jsonl").write_text('{"index": 0}\n')
    (repo / "progress.json").write_text('{"cursor": 1}')
    assert rehydrate("cursor", "register", "pass A", "out.jsonl", "progress.json").code == 0
    for argv in (["resume"], ["hook", "claude"]):
        mods = set(_modules(repo, *argv))
        assert {"rehydrate.cursor.registered", "rehydrate.cursor.verify"} <= mods, argv  # it did check
        assert not {"rehydrate.cursor.pipeline", "rehydrate.cursor.lock"} & mods, argv


def test_with_a_key_reads_load_no_crypto_and_a_checkpoint_only_its_compiled_binding(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the actor holds a key, a read whose last record this clone has verified (or signed) loads no
    cryptography, and no base64, hashlib or json; a checkpoint signs with cryptography's compiled binding alone."""
    monkeypatch.setenv("REHYDRATE_KEY_FILE", str(tmp_path / "signing.key"))
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("key", "init").code == 0
    assert rehydrate("checkpoint", "--done", "a", "--next", "b").code == 0
    heavy = {"base64", "hashlib", "json", "re", "typing", "enum"}
    light = {"binascii"}  # not even the base64 codec: a key is compared as text, decoded only to verify
    for argv in (["resume"], ["hook", "claude"]):
        mods = set(_modules(repo, *argv))
        assert "rehydrate.store.keys.check" in mods, argv  # the check ran
        assert not {m for m in mods if m.startswith("cryptography")} and not (heavy | light) & mods, (argv, mods)
    mods = set(_modules(repo, "checkpoint", "--done", "c", "--next", "d"))
    assert "cryptography.hazmat.bindings._rust" in mods
    assert "cryptography.hazmat.primitives" not in mods and not heavy & mods, heavy & mods


def test_dirty_files_are_hashed_by_the_built_in_sha1_on_the_hook_path(repo: Path) -> None:
    """A checkpoint binds the dirty files' content (store/git/info.blobs) and the brief's live-state compares it:
    with a few small files, through the built-in sha1, never OpenSSL (hashlib)."""
    assert rehydrate("init", "--goal", "g").code == 0
    (repo / "app.py").write_text("print('edited')\n")
    (repo / "notes.md").write_text("notes\n")
    for argv in (["checkpoint", "--done", "a", "--next", "b"], ["resume"], ["hook", "claude"]):
        mods = set(_modules(repo, *argv))
        assert "_sha1" in mods, argv  # the content was hashed, in this process
        assert not {"hashlib", "_hashlib"} & mods, argv


# What a hook that runs on every tool call or model request loads when nothing applies (no watch matches, no task
# tool, no compression): no json (safejson calls its C accelerator), no re (a guard of literal parts and `*` is
# matched with str methods), none of the logs' readers.
PER_CALL_HEAVY = {"json", "re", "fnmatch", "enum", "functools", "collections", "hashlib", "_hashlib", "argparse"}
PER_CALL_HEAVY |= {"rehydrate.harness.guard.watches", "rehydrate.store.wal.record", "rehydrate.store.records"}
PER_CALL_HEAVY |= {"rehydrate.harness.events", "rehydrate.brief", "rehydrate.checks", "rehydrate.store.state"}
PER_CALL_HEAVY |= {"rehydrate.fs.write", "fcntl"}  # (a read writes nothing; a small input needs no wider pipe)
# ... and answered by harness/percall.py: no command line, no dispatch and its handlers, no errors' classes, no
# transcript module (the harness holds its tools' names), no select (the input was there at once), no file layer.
QUICK_NEVER = {"rehydrate.cli", "rehydrate.harness.hook", "rehydrate.errors", "rehydrate.text", "select"}
QUICK_NEVER |= {"rehydrate.transcripts", "rehydrate.fs", "rehydrate.harness.guard.effect"}


def _edit(repo: Path, name: str, path: str) -> dict[str, object]:
    tool = {"file_path": str(repo / path), "old_string": "a", "new_string": "b"}
    return {"hook_event_name": name, "tool_name": "Edit", "tool_input": tool, "cwd": str(repo), "session_id": "s"}


@pytest.mark.parametrize(
    ("harness", "event"),
    [
        ("claude", lambda r: _edit(r, "PreToolUse", "src/a.py")),
        ("claude", lambda r: {**_edit(r, "PostToolUse", "src/a.py"), "tool_response": {"success": True}}),
        ("gemini", lambda r: {**_edit(r, "BeforeTool", "x"), "tool_name": "write_file", "tool_input": {
            "file_path": str(r / "src/a.py"), "content": "x"}}),
        ("gemini", lambda r: {**_edit(r, "AfterTool", "x"), "tool_name": "read_file", "tool_input": {
            "file_path": str(r / "src/a.py")}}),
        ("gemini", lambda r: {"hook_event_name": "BeforeModel", "cwd": str(r), "session_id": "s",
            "llm_request": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}),
    ],
)  # fmt: skip
def test_a_per_call_hook_where_nothing_applies_loads_little(repo: Path, harness: str, event: Any) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("reject", "Edit the schema by hand", "--because", "migrations", "--guard", "db/*").code == 0
    assert rehydrate("reject", "Run migrations by hand", "--because", "deploys", "--guard", "*migrate*").code == 0
    for _ in range(2):  # the first call builds the check by effect's snapshot; the next one reads it
        mods = _called(repo, harness, event(repo))
    assert not (PER_CALL_HEAVY | QUICK_NEVER) & mods, sorted((PER_CALL_HEAVY | QUICK_NEVER) & mods)
    assert "rehydrate.harness.percall" in mods


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_shell_command_is_read_by_the_shell_s_rules_and_no_more(repo: Path, harness: str) -> None:
    """A command is split by shlex (which loads re) to find what it writes, whenever a rejected approach has a
    guard: that is the check itself. The rest stays out."""
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("reject", "Edit the schema by hand", "--because", "migrations", "--guard", "db/*").code == 0
    event = {**_edit(repo, "PreToolUse", "x"), "tool_name": "Bash", "tool_input": {"command": "ls -l > out.txt"}}
    for _ in range(2):
        mods = set(_modules(repo, "hook", harness, event=json.dumps(event)))
    assert "rehydrate.harness.guard.shellwrites" in mods
    assert not (PER_CALL_HEAVY - {"re", "fnmatch", "enum", "functools", "collections"}) & mods


def test_a_watch_that_matches_loads_no_json_and_no_re_either(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("reject", "Edit the schema by hand", "--because", "migrations", "--guard", "db/*").code == 0
    event = json.dumps(_edit(repo, "PreToolUse", "db/schema.sql"))
    _modules(repo, "hook", "claude", event=event)
    r = subprocess.run(
        [sys.executable, "-S", "-c", PROBE.replace("code = main", "code = 0; main"), "hook", "claude"],
        cwd=repo, capture_output=True, text=True, check=True, input=event,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((SRC, SITE))},
    )  # fmt: skip
    assert '"permissionDecision": "ask"' in r.stdout, r
    mods = set(r.stderr.strip().splitlines()[-1].split())
    assert not {"json", "re", "fnmatch", "rehydrate.harness.guard.watches"} & mods, mods


@pytest.mark.parametrize(
    ("harness", "event"),
    [
        ("claude", lambda r: {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(r)}),
        ("claude", lambda r: {**_edit(r, "PostToolUse", "x"), "tool_name": "TaskCreate", "tool_input": {
            "subject": "Write the parser", "description": "d"}, "tool_response": {"task": {"id": "1"}}}),
        ("codex", lambda r: {**_edit(r, "PostToolUse", "x"), "tool_name": "update_plan", "tool_input": {
            "plan": [{"step": "Write the parser", "status": "in_progress"}]}}),
    ],
)  # fmt: skip
def test_a_call_the_whole_dispatch_answers_loads_no_command_line(repo: Path, harness: str, event: Any) -> None:
    """A call percall hands over (a session start, a task list) goes to the dispatch straight from the script's
    entry: none of the command line's modules loads, and the call is answered all the same."""
    assert rehydrate("init", "--goal", "g").code == 0
    mods = _called(repo, harness, event(repo))
    assert "rehydrate.harness.hook" in mods
    assert not {m for m in mods if m == "rehydrate.cli" or m.startswith("rehydrate.cli.")}, sorted(mods)
    if "SessionStart" in json.dumps(event(repo)):
        assert "rehydrate.brief" in mods
    else:
        assert "rehydrate.store.tasks" in mods
