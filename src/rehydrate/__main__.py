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
"""

import gc
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def main() -> int:
    args = sys.argv[1:]
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
        from rehydrate.harness import hook as dispatch
        from rehydrate.text import escaping_streams, terminal_safe

        # what the command line does around a command: undecodable characters written as escapes, and every write
        # made terminal-safe (a brief quotes files that arrived by `git pull`)
        escaping_streams()
        reply = dispatch.answer(args[0], answered, args[1] if len(args) == 2 else None)
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


if __name__ == "__main__":
    sys.exit(main())
