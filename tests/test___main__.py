"""rehydrate/__main__.py: a hook call that percall does not answer goes to the whole dispatch without the command
line, and is written and ended as the command line would; every hook call runs without the cyclic collector and ends
without the interpreter's teardown, so nothing the teardown would do may be left for it: an exit handler, a thread,
a file open for writing, output not yet written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import HOOK_FIXTURES, caller, hook_event, rehydrate
from rehydrate import __main__ as entry
from rehydrate.errors import ExitCode
from rehydrate.harness import hook as dispatch
from rehydrate.harness import percall
from rehydrate.harness.base import Answer

# Every documented input of every harness, answered one after another in one process as the script answers it
# (rehydrate.__main__.hook), then `checkpoint` and `resume`; after each, what the teardown would have had to finish.
LEFT_PROBE = r"""
import atexit, gc, io, json, os, sys
handlers = atexit._ncallbacks()  # what the interpreter's site registered, before any of rehydrate is loaded
from rehydrate.__main__ import hook
from rehydrate.cli import main as command_line
std = {id(s) for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)}
std |= {id(getattr(s, "buffer", None)) for s in (sys.stdout, sys.stderr)}
left = {}
def look(name):
    sys.stdout.flush()
    writing = [
        repr(o) for o in gc.get_objects()
        if isinstance(o, io.IOBase) and id(o) not in std and not o.closed and o.writable()
    ]
    threads = sys.modules["threading"].active_count() if "threading" in sys.modules else 1
    if atexit._ncallbacks() != handlers or threads != 1 or writing:
        left[name] = [atexit._ncallbacks() - handlers, threads, writing]
for args, path in json.loads(sys.argv[1]):
    with open(path, "rb") as sys.stdin:
        hook(args)
    look(" ".join(args) + " " + os.path.basename(path))
for args in (["checkpoint", "--done", "a", "--next", "b"], ["resume"], ["checkpoint", "--done", "b", "--next", "c"]):
    command_line(args)
    look(" ".join(args))
print(json.dumps(left), file=sys.stderr)
"""


def test_a_hook_call_leaves_nothing_for_the_interpreter_s_teardown(repo: Path, tmp_path: Path) -> None:
    """Nor do `checkpoint` and `resume`, which end the same way."""
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("reject", "Edit the schema by hand", "--because", "migrations", "--guard", "db/*").code == 0
    assert rehydrate("checkpoint", "--done", "a", "--next", "b").code == 0
    calls = []
    for fixture in sorted(HOOK_FIXTURES.glob("*/*.json")):
        harness, name = fixture.parent.name, fixture.stem
        path = tmp_path / f"{harness}-{name}.json"
        path.write_bytes(hook_event(repo, harness, name))
        calls.append((caller(harness, name).split(), str(path)))
    assert len(calls) > 40
    r = subprocess.run(
        [sys.executable, "-c", LEFT_PROBE, json.dumps(calls)], cwd=repo, capture_output=True, text=True, check=True
    )
    assert json.loads(r.stderr.strip().splitlines()[-1]) == {}, r.stderr[-3000:]


PRESTART_PROBE = r"""
import json, os, sys
from rehydrate import proc
from rehydrate.__main__ import hook
started, real = [], proc.start
def start(cmds, **kwargs):
    started.extend([c[3], "rehydrate.brief" in sys.modules] for c in cmds)
    return real(cmds, **kwargs)
proc.start = start
code = hook(sys.argv[1:])
sys.stdout.flush()
try:
    os.waitpid(-1, os.WNOHANG)  # returns while any child, running or not reaped, is left
    left = True
except ChildProcessError:
    left = False
print(json.dumps({"code": code, "started": started, "left": left}), file=sys.stderr)
"""


@pytest.mark.parametrize("case", ["brief", "a resumed session's pointer", "no state"])
def test_a_session_start_s_git_status_starts_before_the_brief_loads(repo: Path, case: str) -> None:
    """percall starts git status as soon as it finds the state of a session start, before the brief's modules load,
    and the brief takes it rather than starting another; where no brief is given (a resumed session is pointed to
    the one it was given) the script's entry stops it. Where there is no state, no git runs. No child is left."""
    if case != "no state":
        assert rehydrate("init", "--goal", "Ship the parser").code == 0
        assert rehydrate("checkpoint", "--done", "the tokenizer", "--next", "the parser").code == 0
        subprocess.run(["git", "commit", "-qm", "after the checkpoint", "--allow-empty"], cwd=repo, check=True)
    if case == "a resumed session's pointer":  # this session was given its brief already
        assert rehydrate("hook", "claude", stdin=hook_event(repo, "claude", "SessionStart-startup").decode()).code == 0
    name = "SessionStart-resume" if case == "a resumed session's pointer" else "SessionStart-startup"
    r = subprocess.run(
        [sys.executable, "-c", PRESTART_PROBE, "claude"],
        cwd=repo, input=hook_event(repo, "claude", name), capture_output=True, check=True,
    )  # fmt: skip
    said = json.loads(r.stderr.decode().strip().splitlines()[-1])
    expected = {"brief": [["status", False], ["log", True]], "a resumed session's pointer": [["status", False]]}
    assert said == {"code": 0, "started": expected.get(case, []), "left": False}, said
    context = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"] if r.stdout else ""
    assert ("after the checkpoint" in context) is (case == "brief"), context


GC_PROBE = r"""
import gc, os, sys
from rehydrate.__main__ import main
gc.callbacks.append(lambda phase, info: os.write(2, b"collected\n") if phase == "start" else None)
sys.argv = ["rehydrate", *sys.argv[1:]]
sys.exit(main())
"""


def test_the_script_answers_a_session_start_whole_without_the_collector(repo: Path) -> None:
    """The brief, written out whole before the process ends at once, and no collection while it was made."""
    assert rehydrate("init", "--goal", "Ship the parser").code == 0
    event = hook_event(repo, "claude", "SessionStart-startup")
    r = subprocess.run(
        [sys.executable, "-c", GC_PROBE, "hook", "claude"], cwd=repo, input=event, capture_output=True, check=False
    )
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    brief = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Ship the parser" in brief and "\nconfidence: recovered\n" in brief, brief[-2000:]


@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize("fixture", ["SessionStart-startup", "PreToolUse-Write"])
def test_a_reader_that_closed_its_pipe_keeps_the_exit_code_and_sees_no_traceback(
    repo: Path, fixture: str, buffered: bool
) -> None:
    """The harness gave up on the call (it closed the pipe it reads): the answer cannot be written, and the hook ends
    with its own code and nothing on stderr, as the command line ends on a closed pipe. The answer fails when the
    stream is flushed as the process ends, or as it is written when the stream is unbuffered (PYTHONUNBUFFERED)."""
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("reject", "Edit the schema by hand", "--because", "migrations", "--guard", "db/*").code == 0
    event = hook_event(repo, "claude", fixture, tool_input={"file_path": str(repo / "db" / "a.sql"), "content": "x"})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    out_r, out_w = os.pipe()
    os.close(out_r)  # nobody will read the answer
    try:
        r = subprocess.run(
            [sys.executable, "-m", "rehydrate", "hook", "claude"],
            cwd=repo, input=event, stdout=out_w, stderr=subprocess.PIPE, check=False, env=env,
        )  # fmt: skip
    finally:
        os.close(out_w)
    assert (r.returncode, r.stderr) == (0, b""), r.stderr.decode()


HOSTILE = "\x1b]0;owned\x07\x1b[2J\u202egnp.\x85"  # a title, a cleared screen, a bidi override, a C1 control


def _handed_over(monkeypatch: pytest.MonkeyPatch, data: bytes = b"{}") -> None:
    """percall reads the input and answers nothing: the call goes to the whole dispatch."""
    monkeypatch.setattr(percall, "answer", lambda args: percall.Input(data))


def test_the_whole_dispatch_s_answer_is_made_terminal_safe(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A call the whole dispatch answers is written as the command line would write it: every control character out
    of both streams."""

    def answer(harness: str, data: percall.Input, event_name: str | None = None) -> Answer:
        assert (harness, data.head, event_name) == ("copilot", b"{}", "sessionStart")
        return Answer(stdout=f"brief {HOSTILE}", stderr=f"note {HOSTILE}\n", code=0)

    _handed_over(monkeypatch)
    monkeypatch.setattr(dispatch, "answer", answer)
    assert entry.hook(["copilot", "sessionStart"]) == 0
    out, err = capsys.readouterr()
    assert out == "brief ]0;owned[2Jgnp.\n" and err == "note ]0;owned[2Jgnp.\n", (out, err)


def test_a_bug_in_the_whole_dispatch_ends_as_the_command_line_ends_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the dispatch never raises but a call may (a bug, an interrupt) is told by cli.failed: a message naming
    the crash log (made terminal-safe), and the command line's exit codes."""

    def broken(harness: str, data: percall.Input, event_name: str | None = None) -> Answer:
        raise RuntimeError(f"broken {HOSTILE}")

    _handed_over(monkeypatch)
    monkeypatch.setattr(dispatch, "answer", broken)
    assert entry.hook(["claude"]) == ExitCode.BUG
    err = capsys.readouterr().err
    assert err.startswith("rehydrate: internal error (RuntimeError: broken ]0;owned[2Jgnp.); details in "), err
    assert "crash.log" in err

    def interrupted(harness: str, data: percall.Input, event_name: str | None = None) -> Answer:
        raise KeyboardInterrupt

    monkeypatch.setattr(dispatch, "answer", interrupted)
    assert entry.hook(["claude"]) == ExitCode.INTERRUPTED
    assert capsys.readouterr().err == "rehydrate: interrupted\n"


@pytest.mark.parametrize("command", [["hook", "claude"], ["checkpoint", "--done", "a", "--next", "b"]])
def test_an_answer_that_cannot_be_written_is_never_taken_for_delivered(repo: Path, command: list[str]) -> None:
    """stdout on a full disk (/dev/full): the flush at the end fails, and the process says so on stderr and exits
    with what the interpreter's own end would give (120), never with the call's 0."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    assert rehydrate("init", "--goal", "g").code == 0
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    event = hook_event(repo, "claude", "SessionStart-startup") if command[0] == "hook" else b""
    with open("/dev/full", "wb") as full:
        r = subprocess.run(
            [sys.executable, "-m", "rehydrate", *command],
            cwd=repo, input=event, stdout=full, stderr=subprocess.PIPE, check=False, env=env,
        )  # fmt: skip
    assert r.returncode == entry.UNWRITTEN, (r.returncode, r.stderr)
    assert r.stderr.decode().endswith("rehydrate: the answer could not be written: No space left on device\n")


# ------------------------------------------------------------------------------------------- the package's finder

# Run in a child (the finder is process-wide), on a copy of the package compiled as pip compiles it, first on sys.path.
# It prints, for each module it is asked to import, what the import system sets on it.
FINDER_PROBE = r"""
import builtins, inspect, json, sys, threading
sys.path.insert(0, sys.argv[1])
mode, names = sys.argv[2], json.loads(sys.argv[3])
from rehydrate import __main__ as entry
if mode.startswith("quick"):
    entry.quick_imports()
done = threading.Event()
if mode == "quick, a thread running":
    threading.Thread(target=done.wait).start()
out = {"finders": sum(isinstance(f, entry.Finder) for f in sys.meta_path), "modules": {}}
for name in names:
    try:
        m = __import__(name, fromlist=["_"])
    except Exception as e:
        out["modules"][name] = {"error": f"{type(e).__name__}: {e}"}
        continue
    spec = m.__spec__
    funcs = [f for f in vars(m).values() if inspect.isfunction(f) and f.__module__ == name]
    out["modules"][name] = {
        "loader": type(spec.loader).__name__,
        "attrs": [m.__file__, m.__cached__, m.__package__, getattr(m, "__path__", None), spec.origin, spec.cached,
                  spec.parent, spec.has_location, spec.submodule_search_locations, spec.loader.is_package(name)],
        "code": [f.__code__.co_filename for f in funcs[:3]],
        "source": [inspect.getsource(f).split("\n")[0] for f in funcs[:1]],
        "mark": getattr(m, "MARK", None),
        "on_parent": getattr(sys.modules[name.rpartition(".")[0]], name.rpartition(".")[2], None) is m,
    }
out["threads"] = threading.active_count()
done.set()
out["direct"] = sys.modules["_frozen_importlib"]._find_and_load.__module__ == "rehydrate.__main__"
out["runs"], out["registered"] = getattr(builtins, "RUNS", 0), [name in sys.modules for name in names]
out["attributes"] = [hasattr(sys.modules[n.rpartition(".")[0]], n.rpartition(".")[2]) for n in names]
print(json.dumps(out))
"""


def _modules(package: Path) -> list[str]:
    """Every module and package of the package at package, by name."""
    names = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the package under tmp_path/site, compiled as pip compiles it (timestamp-stamped files)."""
    import compileall
    import shutil

    site = tmp_path / "site"
    shutil.copytree(Path(entry.__file__).parent, site / "rehydrate", ignore=shutil.ignore_patterns("__pycache__"))
    assert compileall.compile_dir(str(site / "rehydrate"), quiet=1)
    return site


def _probe(site: Path, quick: bool | str, names: list[str], *flags: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    mode = quick if isinstance(quick, str) else "quick" if quick else "standard"
    run = subprocess.run(
        [sys.executable, *flags, "-c", FINDER_PROBE, str(site), mode, json.dumps(names)],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    out: dict[str, Any] = json.loads(run.stdout)
    return out


def test_every_module_loaded_by_the_finder_is_what_the_standard_machinery_makes(copy: Path) -> None:
    """Loaded through the script's finder, each of the package's modules (its own file names, its compiled file, its
    package, its source for a traceback) is what the standard finder and loader make of it."""
    names = [n for n in _modules(copy / "rehydrate") if n not in ("rehydrate", "rehydrate.__main__")]
    quick, standard = _probe(copy, True, names), _probe(copy, False, names)
    assert quick["finders"] == 1 and standard["finders"] == 0
    assert len(names) > 150
    assert quick["direct"] and quick["attributes"] == standard["attributes"]
    assert quick["threads"] == 1  # no module starts a thread as it loads (_direct needs none to run)
    for name in names:
        q, s = quick["modules"][name], standard["modules"][name]
        if "error" in s:  # a module that needs an extra (the MCP server's SDK): the same error
            assert q == s, name
            continue
        assert (q["loader"], s["loader"]) == ("Loader", "SourceFileLoader"), name
        assert q["attrs"] == s["attrs"] and q["code"] == s["code"] and q["source"] == s["source"], name
        assert q["on_parent"] == s["on_parent"], name  # False where the package binds a name of its own there
        assert all(str(copy) in f for f in q["code"]), name


def _edit(path: Path, text: str, same_size: bool = False) -> None:
    """Rewrites a module's source behind its compiled file: its time moved on by 10 s, its size kept or not."""
    old = path.read_text()
    new = old.replace("MARK = 0", text) if same_size else old + f"\n{text}\n"
    assert (len(new) == len(old)) is same_size
    st = path.stat()
    path.write_text(new)
    os.utime(path, (st.st_atime, st.st_mtime + 10))


def test_a_source_changed_behind_its_compiled_file_is_what_loads(copy: Path) -> None:
    """The compiled file of a module whose source changed (its size, or its time alone) is not used: the source is
    compiled, and its compiled file written again for the next process, as the standard loader does."""
    errors, text = copy / "rehydrate" / "errors.py", copy / "rehydrate" / "text.py"
    names = ["rehydrate.errors", "rehydrate.text"]
    text.write_text(text.read_text() + "\nMARK = 0\n")
    import compileall

    assert compileall.compile_file(str(text), quiet=1)
    _edit(errors, "MARK = 1")
    _edit(text, "MARK = 2", same_size=True)
    compiled = copy / "rehydrate" / "__pycache__" / f"text.{sys.implementation.cache_tag}.pyc"
    before = compiled.read_bytes()
    for quick in (True, True, False):
        got = _probe(copy, quick, names)["modules"]
        assert [got[n]["mark"] for n in names] == [1, 2], quick
    assert compiled.read_bytes() != before


@pytest.mark.parametrize(
    ("damage", "mark"), [("none", 9), ("missing", 3), ("magic", 3), ("stamp", 3), ("hash-stamped", 3)]
)
def test_a_compiled_file_missing_damaged_or_stamped_otherwise_goes_to_the_standard_loader(
    copy: Path, damage: str, mark: int
) -> None:
    """The finder reads only a compiled file that the standard loader would read as it is. Its compiled file says
    MARK = 9, and its source, of the same size and time, MARK = 3: read as it is (none), 9; missing, with a bit flipped
    in the magic number or in the source's time, or stamped with the hash of the source it was compiled from, 3."""
    import py_compile

    source = copy / "rehydrate" / "errors.py"
    compiled = copy / "rehydrate" / "__pycache__" / f"errors.{sys.implementation.cache_tag}.pyc"
    original = source.read_text()
    source.write_text(original + "\nMARK = 9\n")
    st = source.stat()
    mode = py_compile.PycInvalidationMode
    how = mode.CHECKED_HASH if damage == "hash-stamped" else mode.TIMESTAMP
    py_compile.compile(str(source), str(compiled), doraise=True, invalidation_mode=how)
    source.write_text(original + "\nMARK = 3\n")
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    data = bytearray(compiled.read_bytes())
    if damage == "missing":
        compiled.unlink()
    elif damage in ("magic", "stamp"):
        data[1 if damage == "magic" else 9] ^= 0x10
        compiled.write_bytes(bytes(data))
    quick, standard = (_probe(copy, q, ["rehydrate.errors"])["modules"]["rehydrate.errors"] for q in (True, False))
    assert quick["mark"] == standard["mark"] == mark
    assert (quick["loader"], quick["attrs"]) == ("Loader", standard["attrs"])


def test_with_optimization_the_standard_machinery_does_it_all(copy: Path) -> None:
    """-O names its compiled files otherwise (NAME.TAG.opt-1.pyc): no finder is installed."""
    got = _probe(copy, True, ["rehydrate.errors"], "-O")
    assert got["finders"] == 0 and got["modules"]["rehydrate.errors"]["loader"] == "SourceFileLoader"
    assert not got["direct"]


def test_the_package_s_modules_load_directly_unless_a_thread_runs(copy: Path) -> None:
    """In a hook's process the package's modules are made and run without the standard machinery's bookkeeping for
    threads (a lock for each module, held while it runs); once a thread runs, with it."""
    import compileall

    watch = copy / "rehydrate" / "watch.py"
    watch.write_text('import sys\nMARK = __name__ in sys.modules["_frozen_importlib"]._module_locks\n')
    assert compileall.compile_file(str(watch), quiet=1)
    got = {mode: _probe(copy, mode, ["rehydrate.watch"]) for mode in ("quick", "quick, a thread running", "standard")}
    assert [got[m]["direct"] for m in got] == [True, True, False]
    assert [got[m]["modules"]["rehydrate.watch"]["mark"] for m in got] == [False, True, True]
    assert got["quick"]["modules"]["rehydrate.watch"]["loader"] == "Loader"


def test_a_circular_import_and_a_module_that_puts_another_in_its_place_load_as_the_standard_way(copy: Path) -> None:
    """A module that imports a name from a module still loading (a circular import) fails with the standard message;
    one that puts another module in its place in sys.modules is that other module, on its package too."""
    (copy / "rehydrate" / "ring.py").write_text("from rehydrate import ring2\nLATE = 1\n")
    (copy / "rehydrate" / "ring2.py").write_text("from rehydrate.ring import LATE\n")
    (copy / "rehydrate" / "swap.py").write_text(
        "import sys, types\n"
        "other = types.ModuleType(__name__)\n"
        'other.__dict__.update({k: v for k, v in globals().items() if k.startswith("__")}, MARK="swapped")\n'
        "sys.modules[__name__] = other\n"
    )
    names = ["rehydrate.ring", "rehydrate.swap"]
    quick, standard = _probe(copy, True, names), _probe(copy, False, names)
    assert quick["direct"] and not standard["direct"]
    ring = quick["modules"]["rehydrate.ring"]
    assert ring == standard["modules"]["rehydrate.ring"] and "partially initialized module" in ring["error"]
    assert quick["registered"] == standard["registered"] == [False, True]
    swap = quick["modules"]["rehydrate.swap"]
    assert swap["mark"] == "swapped" and swap["on_parent"]
    assert {**swap, "loader": None} == {**standard["modules"]["rehydrate.swap"], "loader": None}


def test_a_module_that_fails_as_it_loads_is_not_left_loaded(copy: Path) -> None:
    """A module whose code raises: the error reaches the importer, the module is not left in sys.modules nor on its
    package, and the next import runs it again; as the standard machinery does."""
    broken = copy / "rehydrate" / "broken.py"
    broken.write_text(
        'import builtins\nbuiltins.RUNS = getattr(builtins, "RUNS", 0) + 1\nraise LookupError("broken")\n'
    )
    names = ["rehydrate.broken", "rehydrate.broken"]
    quick, standard = _probe(copy, True, names), _probe(copy, False, names)
    assert quick["direct"] and not standard["direct"]
    for got in (quick, standard):
        assert got["modules"]["rehydrate.broken"] == {"error": "LookupError: broken"}
        assert got["runs"] == 2 and got["registered"] == got["attributes"] == [False, False]


def test_the_finder_leaves_to_the_standard_finders_what_it_does_not_know(tmp_path: Path) -> None:
    """Names outside the package, a parent spread over folders, a folder it cannot list, a name not there, a name
    beside a compiled extension of the same name; a package's folder comes before a module of the same name, and a
    folder without __init__.py does not."""
    import _imp

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg.py").write_text("")
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain.py").write_text("")
    (tmp_path / "native.py").write_text("")
    (tmp_path / ("native" + _imp.extension_suffixes()[0])).write_text("")
    finder, here = entry.Finder(), [str(tmp_path)]
    pkg = finder.find_spec("rehydrate.pkg", here)
    assert pkg.origin == str(tmp_path / "pkg" / "__init__.py")
    assert pkg.submodule_search_locations == [str(tmp_path / "pkg")] and pkg.loader.is_package("rehydrate.pkg")
    plain = finder.find_spec("rehydrate.plain", here)
    assert plain.origin == str(tmp_path / "plain.py") and plain.submodule_search_locations is None
    assert plain.cached == str(tmp_path / "__pycache__" / f"plain.{sys.implementation.cache_tag}.pyc")
    for name, path in [
        ("other.pkg", here),
        ("rehydrate.pkg", [*here, str(tmp_path / "pkg")]),
        ("rehydrate.pkg", [str(tmp_path / "absent")]),
        ("rehydrate.nothing", here),
        ("rehydrate.native", here),
        ("rehydrate.pkg", None),
    ]:
        assert finder.find_spec(name, path) is None, (name, path)
    (tmp_path / "late.py").write_text("")
    assert finder.find_spec("rehydrate.late", here) is None  # listed once, for a hook's short process
    finder.invalidate_caches()
    assert finder.find_spec("rehydrate.late", here) is not None
