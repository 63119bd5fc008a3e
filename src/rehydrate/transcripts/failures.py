"""What a failed command's output says: its exit code and the lines that tell what went wrong, as each format's
tail reader keeps them in Recent.failed. str methods only: this runs on the hook path, where re is not loaded."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.transcripts.model import Failed


def first_line(text: object) -> str:
    """The first non-blank line of a text, stripped ("" for anything else)."""
    if isinstance(text, str):
        for line in text.split("\n"):
            if line.strip():
                return line.strip()
    return ""


_NOT_ERRORS = ("Chunk ID:", "Wall time:", "Original token count:", "Output:")
_EXIT_PREFIXES = ("Exit code ", "Process exited with code ", "Exit code: ")
# A line naming one of these (lowercased) says what went wrong; command echoes and the lines that only restate the
# exit status (TRAILERS) do not, and are shown only when nothing else does.
ERROR_WORDS: tuple[str, ...] = ("error", "fail", "fatal", "panic", "exception", "traceback", "conflict", "denied")
ERROR_WORDS += ("not found", "cannot", "can't", "unrecognized", "no such file", "refused", "invalid", "×", "✗", "✖")
ERROR_WORDS += ("✘",)
TRAILERS: tuple[str, ...] = ("exited with code", "exit code", "exit status", "task failed", "some errors were emitted")
TRAILERS += ("for more information", "a complete log of this run", "command failed with")
BARE = ("fail", "failed", "error", "errors", "failure", "failures")
ECHOES = ("$ ", "> ", "+ ")  # a shell's or a script runner's echo of the command it runs
MAX_PART = 150  # each of the two lines telling() joins
MAX_SCAN = 64 << 10  # the most of an output's end telling() reads (tools print errors last), beside its first 4 KiB


def exit_error(text: str) -> tuple[int | None, str]:
    """A failed command's exit code and the lines that say what failed (telling()): "Exit code N" (Claude Code's
    Bash) or "Process exited with code N" / "Exit code: N" (Codex) read off its first lines."""
    code: int | None = None
    for line in text.split("\n", 20)[:20]:
        words = line.strip()
        for prefix in _EXIT_PREFIXES:
            if words.startswith(prefix):
                number = words[len(prefix) :].strip()
                if number.lstrip("-").isdigit() and code is None:
                    code = int(number)
                break
    return code, "" if code == 0 else telling(text)  # a success has nothing to tell: no scan of its output


def telling(text: str) -> str:
    """What a failed command's output says went wrong, on one line: its first and its last line that name an error
    (ERROR_WORDS), joined by " … " when they differ (a merge's CONFLICT and "Automatic merge failed", a test's
    first FAIL and its summary), each cut to MAX_PART; leaving out the exit status header, command echoes ("$ biome
    check .") and banners that name no error ("bun test v1.3.13"). Lines that only restate the exit status
    (TRAILERS: `error: script "lint" exited with code 1`) count only when no other line names an error; with none,
    the output's last line that is not a header. str methods only: this runs on the hook path, where re is not
    loaded."""
    if len(text) > MAX_SCAN + 4096:
        text = text[:4096] + "\n" + text[-MAX_SCAN:]
    found: list[str] = []
    trailers: list[str] = []
    last = ""
    for line in text.split("\n"):
        words = " ".join(line.split())
        if not words or words.startswith(_NOT_ERRORS) or words.startswith(_EXIT_PREFIXES):
            continue
        if words.startswith(ECHOES) or (words[:1] == "[" and "] $ " in words[:60]):
            continue
        low = words.lower()
        if any(w in low for w in ERROR_WORDS):
            if low.strip("-=*#:. ") in BARE or any(t in low for t in TRAILERS):
                trailers.append(words)
            else:
                found.append(words)
        elif not low.startswith("hint:"):
            last = words
    if not found:
        return _part(trailers[-1]) if trailers else _part(last)
    first, end = _part(found[0]), _part(found[-1])
    return first if first == end else first + " … " + end


def _part(words: str) -> str:
    return words if len(words) <= MAX_PART else words[: MAX_PART - 1].rstrip() + "…"


def later_ok(failed: list[Failed], command: str) -> None:
    """A command that succeeded: its earlier failures get later_ok."""
    for one in failed:
        if one.command == command:
            one.later_ok = True
