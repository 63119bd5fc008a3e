"""`python -m rehydrate` and the `rehydrate` script: the command line (cli.main), except that a harness's hook call
goes first to harness/percall.py, which answers a per-call event without loading the command line at all."""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.harness.percall import Input


def main() -> int:
    args = sys.argv[1:]
    taken: Input | None = None
    if len(args) in (2, 3) and args[0] == "hook":
        from rehydrate.harness import percall

        answered = percall.answer(args[1:])
        if isinstance(answered, int):
            return answered
        taken = answered  # read, not answered: the command line answers it
    from rehydrate.cli import main as command_line

    return command_line(hook_input=taken)


if __name__ == "__main__":
    sys.exit(main())
