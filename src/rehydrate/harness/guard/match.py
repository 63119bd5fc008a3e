"""Whether a tool call's target matches a rejected approach's watch: its guard (a path glob or a command pattern) and
its `contains` (a text in what is written or run). The check before every tool call asks this, so it is cheap: a
glob of literal parts and `*` (`db/*`, `*.sql`, `*migrate*`, the common guards) is matched with str methods, exactly
as fnmatch.fnmatchcase would, and a glob with `?` or `[` only where its literal start and end allow a match at all.
fnmatch (and the `re` it loads, a third of the interpreter's own start) is loaded only for such a glob.
"""

from __future__ import annotations

import os

Watch = tuple["str | None", "str | None", str]  # (guard, contains, the rejected approach's line)


class Blind(Exception):
    """The rejected approaches cannot be read (10_invariants.md absent, not a regular file, unreadable, or holding a
    rejected line too long to be one rehydrate wrote): the guard cannot tell what is rejected, so it fails closed."""


def hit(
    guard: str | None, contains: str | None, path: str | None, rel_path: str | None, command: str | None, written: str
) -> bool:
    """A rejected approach's watch matches a tool call: its guard (if any) matches the path or command, and its
    `contains` (if any) is in what the call writes or runs. A plain substring, never a pattern: 10_invariants.md
    arrives by git pull, and a planted regular expression could make the hook run for ever."""
    if guard is None and contains is None:
        return False
    if guard is not None and not matches(guard, path, rel_path, command):
        return False
    return contains is None or contains in written


def matches(guard: str, path: str | None, rel_path: str | None, command: str | None) -> bool:
    """A guard is a path glob or a command pattern: it matches a target path, a command, or a word of it."""
    glob = Glob(guard)
    for target in (path, rel_path):
        if target and (glob.match(target) or glob.match(os.path.basename(target))):
            return True
    if command:
        if guard in command or glob.match(command):
            return True
        return any(glob.match(word.strip("'\"")) for word in command.split())
    return False


class Glob:
    """fnmatch.fnmatchcase(text, pattern), matched without `re` where the pattern allows."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.stars = None if "?" in pattern or "[" in pattern else pattern.split("*")  # literal parts around `*`
        # for another glob: the literal text every match starts and ends with (a necessary condition)
        cut = min((i for i in (pattern.find("?"), pattern.find("["), pattern.find("*")) if i >= 0), default=0)
        self.start = pattern[:cut]
        end = len(pattern)
        while end > cut and pattern[end - 1] not in "*?[]":
            end -= 1
        self.end = pattern[end:]

    def match(self, text: str) -> bool:
        parts = self.stars
        if parts is not None:
            return star_match(text, parts)
        if not (text.startswith(self.start) and text.endswith(self.end)):
            return False
        import fnmatch  # and re: only for a glob with `?` or `[` whose literal start and end allow a match

        return fnmatch.fnmatchcase(text, self.pattern)


def star_match(text: str, parts: list[str]) -> bool:
    """Whether text matches the glob whose literal parts around each `*` are parts (no `?`, no `[`): it starts with
    the first, ends with the last, and holds the others in order between them, each found leftmost (for `*` alone,
    the leftmost place of each part leaves the most room for the rest, so it finds a match whenever there is one)."""
    first, last = parts[0], parts[-1]
    if len(parts) == 1:
        return text == first
    if len(text) < len(first) + len(last) or not text.startswith(first) or not text.endswith(last):
        return False
    at, end = len(first), len(text) - len(last)
    for part in parts[1:-1]:
        found = text.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True
