"""`python -m rehydrate` and the `rehydrate` script: the command line (cli.main), except for a harness's hook call,
which never loads it; a hook call, `checkpoint` and `resume` end without the interpreter's teardown.

A hook call (`rehydrate hook HARNESS [EVENT]`) goes to harness/percall.py, which answers a per-call event with the
few modules it needs; any other event goes from here to the whole dispatch (harness/hook.py), its input read
already, with what the command line would do around it (the output made terminal-safe); only what ends a call badly
(a closed pipe, an interrupt, a bug) is told by the command line's own ending (cli.failed).

The process then ends at once (ended). The interpreter's teardown frees every object one by one: that costs a call
where nothing applies more than its own work (bench/percall.py), and nothing needs it. The hook path writes through
os-level calls that are durable when they return (its crash points are enumerated: a kill at any of them loses
nothing), closes every file it opens, and starts no thread and no exit handler (tests/test___main__.py looks after
every documented call of every harness, and after `checkpoint` and `resume`).

For a hook call, `checkpoint` and `resume`, before any of that, the package's own modules are found and loaded by a
finder of their own (Finder): a session start loads some seventy of them, and the standard machinery's own work for
each (looking through the import system's finders, then the folder, then checking the compiled file) costs more than
loading many of them does; a module not loaded yet is then made, registered and run directly (_direct), without the
import system's bookkeeping for threads, in a process that starts none. A long-lived command (the MCP server) keeps
the standard machinery, which sees files change.
"""

import _imp
import _thread
import gc
import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


def main() -> int:
    args = sys.argv[1:]
    if args[:1] in (["hook"], ["checkpoint"], ["resume"]):  # short processes: a listing taken once stays true
        quick_imports()
    if len(args) in (2, 3) and args[0] == "hook":
        # a process of milliseconds that loads dozens of modules: the cyclic collector would run several times
        # while they load, for garbage that reference counting frees anyway
        gc.disable()
        ended(hook(args[1:]))
    from rehydrate.cli import main as command_line

    if args[:1] in (["checkpoint"], ["resume"]):  # the hook path's two commands, which agents run often, end so too
        ended(command_line())
    return command_line()


def hook(args: list[str]) -> int:
    """Answer `rehydrate hook HARNESS [EVENT]` (args: HARNESS [EVENT]); its exit code."""
    from rehydrate.harness import percall

    try:
        answered = percall.answer(args)
        if isinstance(answered, int):
            return answered
        if answered is None:  # the command line reads stdin itself, or says what is wrong with the arguments
            from rehydrate.cli import main as command_line

            return command_line(["hook", *args])
        try:
            from rehydrate.harness import hook as dispatch
            from rehydrate.text import escaping_streams, terminal_safe

            # what the command line does around a command: undecodable characters written as escapes, and every
            # write made terminal-safe (a brief quotes files that arrived by `git pull`)
            escaping_streams()
            reply = dispatch.answer(args[0], answered, args[1] if len(args) == 2 else None)
        finally:  # a git status percall started for a brief that was not given (checks.git.probe.prestart)
            probe = sys.modules.get("rehydrate.checks.git.probe")
            if probe is not None:
                probe.stop_prestarted()
        return percall.told(reply, terminal_safe)
    except (Exception, KeyboardInterrupt) as e:  # dispatch.answer never raises: a closed pipe, an interrupt, a bug
        from rehydrate.cli import failed

        return failed(["hook", *args], e)


UNWRITTEN = 120  # what the interpreter itself exits with when it cannot flush stdout at its end


def ended(code: int) -> "NoReturn":
    """End the process with code once stdout and stderr are written out, skipping the interpreter's teardown (see
    the module's docstring). A reader that closed its pipe gets nothing more, and the code is kept. An answer that
    could not be written otherwise (a full disk, an I/O error) is said on stderr and ends with UNWRITTEN, as the
    interpreter's own end would: the harness must not take it for delivered."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (BrokenPipeError, ValueError):  # a reader that closed its pipe, a closed stream
            pass
        except OSError as e:
            why = e.strerror or type(e).__name__
            try:
                os.write(2, f"rehydrate: the answer could not be written: {why}\n".encode("ascii", "replace"))
            except OSError:
                pass
            code = UNWRITTEN
    os._exit(code)


# ------------------------------------------------------------------------------------------- the package's finder

# The import system's own classes, taken from where it keeps them: `importlib.machinery` holds the same ones, but
# importing it loads `warnings` and `importlib` (about 0.8 ms). An interpreter without them gets no finder.
_EXTERNAL: "Any" = sys.modules.get("_frozen_importlib_external")
_BOOTSTRAP: "Any" = sys.modules.get("_frozen_importlib")
_PACKAGE = "rehydrate."
_CODE = type(main.__code__)  # a code object's type, without loading `types`


def quick_imports() -> None:
    """Find and load this package's modules with Finder, first among the import system's finders, once per process
    (a short one: Finder lists each folder once, for the process's life). Not where a compiled file is named otherwise
    than `__pycache__/NAME.TAG.pyc`: with -O, a pycache prefix, or an interpreter without a cache tag (the standard
    machinery then does it all, as before)."""
    if _EXTERNAL is None or _BOOTSTRAP is None or sys.implementation.cache_tag is None:
        return
    if sys.flags.optimize or sys.pycache_prefix is not None:
        return
    if not any(isinstance(f, Finder) for f in sys.meta_path):
        finder = Finder()
        sys.meta_path.insert(0, finder)
        standard = getattr(_BOOTSTRAP, "_find_and_load", None)
        if callable(standard) and callable(getattr(_thread, "_count", None)):
            _BOOTSTRAP._find_and_load = _direct(finder, standard)


def _direct(finder: "Finder", standard: "Any") -> "Any":
    """What the import system calls for a module not loaded yet (`_find_and_load`, which the interpreter looks up on
    its import module at each import), made to load the package's own modules directly: found by finder, then made,
    registered and run as the standard machinery does, without its bookkeeping for threads (a lock made for each
    module, the import lock taken and released several times, every finder asked, each attribute set through its
    own checks), which costs a session start's seventy modules about 1 ms.

    The rest goes to standard: a name outside the package or whose parent is not loaded yet (which standard then
    loads, through this again), one finder does not know, and any import once a thread has started, for which the
    locks are there. No module of the package starts a thread as it loads (tests/test___main__.py imports them all):
    a thread started meanwhile would find a module half-made without waiting for it."""
    modules = sys.modules
    module_type = type(sys)
    threads = _thread._count  # the threads started and still running

    def find_and_load(name: str, import_: "Any") -> "Any":
        parent_name, _, leaf = name.rpartition(".")
        parent = modules.get(parent_name)
        if parent is None or not name.startswith(_PACKAGE) or name in modules or threads():
            return standard(name, import_)
        spec = finder.find_spec(name, getattr(parent, "__path__", None))
        if spec is None:
            return standard(name, import_)
        code = spec.loader.get_code(name)
        module: Any = module_type(name)
        # what _init_module_attrs sets on a module of a source file, in its order
        module.__loader__ = spec.loader
        if spec.submodule_search_locations is None:
            module.__package__, module.__spec__ = parent_name, spec
        else:
            module.__package__, module.__spec__, module.__path__ = name, spec, spec.submodule_search_locations
        module.__file__, module.__cached__ = spec.origin, spec.cached
        # what the interpreter reads to tell a circular import in its error messages: the module as initializing,
        # and (3.12 on) the submodules its parent has not finished loading
        pending = getattr(getattr(parent, "__spec__", None), "_uninitialized_submodules", None)
        if type(pending) is list:
            pending.append(leaf)
        spec._initializing = True
        modules[name] = module
        try:
            exec(code, module.__dict__)
        except BaseException:  # as the standard machinery does: a module that failed is not left half-made
            modules.pop(name, None)
            raise
        finally:
            spec._initializing = False
            if type(pending) is list:
                pending.pop()
        module = modules[name]  # a module may put another object in its place
        try:
            setattr(modules[parent_name], leaf, module)
        except AttributeError:
            pass  # the standard machinery warns (ImportWarning, ignored by default) and goes on
        return module

    return find_and_load


class Loader(getattr(_EXTERNAL, "SourceFileLoader", object)):  # type: ignore[misc]
    """The standard loader of a module's source (the source, resources and package-ness are its own), except that the
    compiled file is read with one stat of the source and one read, and checked as the standard loader checks it: the
    interpreter's magic number, a file stamped with the source's time and size. Anything else (a missing, stale,
    hash-stamped or unreadable compiled file) goes to the standard loader, which compiles the source and writes the
    compiled file as it always does."""

    def __init__(self, fullname: str, path: str, compiled: str) -> None:
        super().__init__(fullname, path)
        self.compiled = compiled

    def get_code(self, fullname: str) -> "Any":
        try:
            st = os.stat(self.path)
            # os-level calls rather than io.open_code's buffered file: half of this method's time. open_code differs
            # from open only where an embedding application set a hook to vet code; this is the rehydrate script's
            # stock interpreter, and audit hooks see os.open as they see open
            fd = os.open(self.compiled, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
            try:
                size = os.fstat(fd).st_size
                data = os.read(fd, size)
            finally:
                os.close(fd)
        except OSError:
            return super().get_code(fullname)
        if len(data) != size:
            return super().get_code(fullname)
        stamp = (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
        if data[:4] != _EXTERNAL.MAGIC_NUMBER or data[4:8] != b"\0\0\0\0" or data[8:16] != stamp:
            return super().get_code(fullname)
        try:
            code = marshal.loads(memoryview(data)[16:])
        except (EOFError, ValueError, TypeError):
            code = None
        if type(code) is not _CODE:
            return super().get_code(fullname)  # which fails as it would have, or mends the file
        _imp._fix_co_filename(code, self.path)  # type: ignore[attr-defined]  # as the standard loader does
        return code


class Finder:
    """Finds `rehydrate.NAME` in its parent package's one folder, from one listing of each folder: a package
    (NAME/__init__.py) or a module (NAME.py), as the standard finder would. Anything else (a folder it cannot list, a
    compiled extension of the same name, a parent spread over several folders, a name not there): None, and the
    standard finders look."""

    def __init__(self) -> None:
        self._listed: dict[str, frozenset[str]] = {}
        self._tag = sys.implementation.cache_tag
        self._extensions = tuple(_imp.extension_suffixes())

    def invalidate_caches(self) -> None:
        self._listed.clear()

    def find_spec(self, name: str, path: object = None, target: object = None) -> "Any":
        if not name.startswith(_PACKAGE) or not isinstance(path, list) or len(path) != 1:
            return None
        folder = path[0]
        names = self._listed.get(folder)
        if names is None:
            try:
                names = self._listed[folder] = frozenset(os.listdir(folder))
            except (OSError, TypeError, ValueError):
                return None
        leaf = name.rpartition(".")[2]
        if any(leaf + suffix in names for suffix in self._extensions):
            return None
        if leaf in names:
            inner = os.path.join(folder, leaf)
            source = os.path.join(inner, "__init__.py")
            if os.path.isfile(source):
                return self._spec(name, source, inner)
        if leaf + ".py" in names:
            return self._spec(name, os.path.join(folder, leaf + ".py"), None)
        return None

    def _spec(self, name: str, source: str, package: str | None) -> "Any":
        where, leaf = os.path.split(source)
        compiled = os.path.join(where, "__pycache__", f"{leaf[:-3]}.{self._tag}.pyc")
        loader = Loader(name, source, compiled)
        spec = _BOOTSTRAP.ModuleSpec(name, loader, origin=source, is_package=package is not None)
        spec.has_location = True
        spec.cached = compiled
        if package is not None:
            spec.submodule_search_locations = [package]
        return spec


if __name__ == "__main__":
    sys.exit(main())
