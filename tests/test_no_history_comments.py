"""Comments and docstrings say why the code is as it is, never which issue, item, goal, review finding, plan section,
work package or round brought it: such a citation means nothing to a reader without the tracker, and goes stale.

Comments are read with tokenize and docstrings with ast, so that string literals the code uses (test data such as a
ledger's numbered items, a transcript's "/review") are never taken for prose.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("src", "tests", "bench")

# Each pattern is a citation, not a product word: "review" alone (the reviewer agent of `rehydrate accept`) and
# "goal" alone (the goal file) are the product's vocabulary; only a number after them, or the review's F-numbers,
# make them a citation. Whitespace is `\s+` so that a citation cut by a docstring's line break is still found.
CITATIONS = {
    "issue N": re.compile(r"\bissues?[\s#-]*[0-9]+\b", re.IGNORECASE),
    "item N": re.compile(r"\bitems?\s+[0-9]+\b", re.IGNORECASE),
    "goal N": re.compile(r"\bgoals?\s+[0-9]+\b", re.IGNORECASE),
    "review F-number": re.compile(r"\breview(?:'s)?\W{1,3}(?:\w+\W{1,3}){0,2}F[0-9]+\b|\bF[0-9]+-F[0-9]+\b"),
    "plan §": re.compile(r"\bplan\s*§|§\s*[0-9]"),
    "WP-X": re.compile(r"\bWP-[A-Z]\b"),
    "round N": re.compile(r"\bround\s+[0-9]+\b", re.IGNORECASE),
}

# Allowances, each a file and a pattern whose words are that file's own vocabulary there:
# - checks/git/probe.py runs its git calls in numbered rounds (the first at once, the second only when needed).
ALLOWED = {("src/rehydrate/checks/git/probe.py", "round N")}


def python_files() -> list[Path]:
    # a hidden folder holds what is not ours (tests/e2e/.cache: the harness CLIs from npm, their own Python files)
    found = (p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))
    return sorted(p for p in found if not any(part.startswith(".") for part in p.relative_to(ROOT).parts))


def comments(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment."""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string


def docstrings(source: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of the module's, each class's and each function's docstring."""
    tree = ast.parse(source)
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.walk(tree):
        if not isinstance(node, kinds) or not node.body:
            continue
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            yield first.lineno, first.value.value


def citations(path: Path) -> Iterator[str]:
    """`file:line: [pattern] text` for each citation in the file's comments and docstrings."""
    source = path.read_text(encoding="utf-8")
    rel = path.relative_to(ROOT).as_posix()
    for start, text in (*comments(source), *docstrings(source)):
        for name, pattern in CITATIONS.items():
            if (rel, name) in ALLOWED:
                continue
            for m in pattern.finditer(text):
                line = start + text.count("\n", 0, m.start())
                yield f"{rel}:{line}: [{name}] {m.group(0)!r}"


def test_the_patterns_find_citations_and_leave_product_words() -> None:
    cited = "# (issue 11, goal 2) item 14: Issue 9 item 6, pre-issue-11, review F13, the review's F5-F8, plan §7.1"
    found = {name for name, pattern in CITATIONS.items() if pattern.search(cited)}
    assert found == {"issue N", "item N", "goal N", "review F-number", "plan §"}
    assert CITATIONS["WP-X"].search("(cli/recover.py, WP-E)")
    assert CITATIONS["round N"].search("Hardening, round 3")
    assert CITATIONS["issue N"].search('"""... (issue\n    11)."""')
    product = "the reviewer's approval; the review no longer covers it; the goal; an item; F5 to refresh; round trip"
    assert not any(pattern.search(product) for pattern in CITATIONS.values())


def test_comments_and_docstrings_cite_no_issue_item_goal_review_plan_or_round() -> None:
    found = [hit for path in python_files() for hit in citations(path)]
    assert not found, "comments and docstrings that narrate history:\n" + "\n".join(found)
