"""transcripts.failures: what a failed command's output says, its exit code and the lines that tell what failed."""

from __future__ import annotations

from rehydrate.transcripts.failures import exit_error


def test_the_error_lines_of_a_failed_command_are_the_ones_that_say_what_failed() -> None:
    merge = "Exit code 1\nAuto-merging a.go\nCONFLICT (content): Merge conflict in a.go\nAutomatic merge failed; fix."
    assert exit_error(merge) == (1, "CONFLICT (content): Merge conflict in a.go … Automatic merge failed; fix.")
    lint = "Exit code 1\n$ biome check .\n  × Formatter would have printed\nFound 3 errors.\nerror: exited with code 1"
    assert exit_error(lint) == (1, "× Formatter would have printed … Found 3 errors.")
    bun = "Exit code 1\nbun test v1.3.13\n\n(fail) adds > works\n 1 fail"
    assert exit_error(bun)[1] == "(fail) adds > works … 1 fail"  # not the banner
    assert exit_error("Exit code 2\nall good\nundefined: object") == (2, "undefined: object")  # no word: the last line
    assert exit_error('Exit code 1\nerror: script "x" exited with code 1') == (
        1,
        'error: script "x" exited with code 1',
    )
    long = "Exit code 1\n" + "\n".join(f"ok {i}" for i in range(50_000)) + "\nFAILED tests/t.py::test_x - boom"
    assert exit_error(long)[1] == "FAILED tests/t.py::test_x - boom"  # from the output's end
