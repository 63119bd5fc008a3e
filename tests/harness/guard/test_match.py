"""harness/guard/match.py: a guard's glob matched without `re` where it can be, and always exactly as
fnmatch.fnmatchcase would (the guard before each tool call asks it; fnmatch is the reference)."""

from __future__ import annotations

import fnmatch

from hypothesis import given, settings
from hypothesis import strategies as st

from rehydrate.harness.guard import match

ALPHABET = "ab/.*?[]!-x"
GLOBS = st.text(alphabet=ALPHABET, max_size=10)
TEXTS = st.text(alphabet="ab/.*?[]!-x", max_size=12)


@settings(max_examples=3000, deadline=None)
@given(GLOBS, TEXTS)
def test_every_glob_matches_as_fnmatch_does(pattern: str, text: str) -> None:
    assert match.Glob(pattern).match(text) == fnmatch.fnmatchcase(text, pattern), (pattern, text)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.text(alphabet="ab/.", max_size=3), min_size=1, max_size=5), st.text(alphabet="ab/.", max_size=14))
def test_a_glob_of_stars_is_matched_as_fnmatch_does(parts: list[str], text: str) -> None:
    pattern = "*".join(parts)
    assert match.star_match(text, parts) == fnmatch.fnmatchcase(text, pattern), (pattern, text)


def test_the_common_guards_never_load_fnmatch() -> None:
    """`db/*`, `*.sql`, `*migrate*`, a literal path: str methods only (a glob with `?` or `[` may load it)."""
    for pattern, yes, no in (
        ("db/*", "db/schema.sql", "src/db/x"),
        ("*.sql", "schema.sql", "schema.sq"),
        ("*migrate*", "python manage.py migrate --fake", "make test"),
        ("uv.lock", "uv.lock", "uv.lock.bak"),
        ("src/*/gen/*.py", "src/a/gen/b.py", "src/a/gen/b.pyc"),
    ):
        glob = match.Glob(pattern)
        assert glob.stars is not None and glob.match(yes) and not glob.match(no), pattern
    assert match.Glob("file[0-9].txt").stars is None and match.Glob("a?c").stars is None


def test_a_watch_is_a_guard_and_a_text_both_matching() -> None:
    assert match.hit("db/*", None, "/p/db/a.sql", "db/a.sql", None, "")
    assert match.hit("*migrate*", None, None, None, "python manage.py migrate", "")
    assert match.hit(None, "eval(", "/p/x.py", "x.py", None, "y = eval(s)")
    assert not match.hit("db/*", "DROP", "/p/db/a.sql", "db/a.sql", None, "CREATE")
    assert not match.hit(None, None, "/p/db/a.sql", "db/a.sql", None, "")
    assert match.matches("schema.sql", "/p/db/schema.sql", None, None)  # a path's base name
    assert match.matches("*.sql", None, None, "psql -f 'db/x.sql'")  # a word of the command, unquoted
