"""What the work tree's hash (store/evidence/worktree.tree_of, behind `rehydrate run` and every check of a claim)
costs in this checkout against another commit's (--against, main by default), and with files behind index marks.

Builds a real git repository of --files files (in --dirs folders, committed, a state folder beside them), then times
in this process, interleaved round by round (order rotating, --warmup rounds thrown away):

- tree: this checkout's tree_of (it reads the index for entries marked assume-unchanged or skip-worktree while
  `git add -A` runs);
- tree[REV]: the tree_of of store/evidence/worktree.py (store/evidence/ before it was a package) at commit REV (`git
  show`), loaded beside this checkout's modules;
- tree[marked]: this checkout's tree_of with --marked files marked assume-unchanged in the real index (its slow
  path: unmark them in the scratch index, `git add -A` again).

Reports the medians and the ratio tree / tree[REV], the common case's cost (no target: a ratio that drifts is a
number to look at).

    python bench/tree_scale.py [--files 10000] [--dirs 200] [--marked 1000] [--against main] [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from typing import Any

import _common
from rehydrate.store.evidence import worktree as evidence


def build(root: str, files: int, dirs: int) -> None:
    _common.git_repo(root)
    for n in range(files):
        folder = os.path.join(root, f"pkg{n % dirs:04}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"mod{n:06}.py"), "w", encoding="utf-8") as f:
            f.write(f"VALUE = {n}\n")
    os.makedirs(os.path.join(root, "state"))
    _common.git(root, "add", "-A")
    _common.git(root, "-c", "gc.auto=0", "commit", "-qm", "many files")  # no gc packing objects while timed


def _old_evidence(rev: str) -> Any:
    """The module of tree_of as it is at commit rev (store/evidence/worktree.py, or store/evidence/ before the
    package), loaded as a module of its own beside this checkout's."""
    import importlib.util

    for path in ("src/rehydrate/store/evidence/worktree.py", "src/rehydrate/store/evidence/"):
        try:
            _common.run(["git", "cat-file", "-e", f"{rev}:{path}"], cwd=_common.REPO)
            break
        except _common.BenchError:  # not at that commit: the older path
            continue
    source = _common.run(["git", "show", f"{rev}:{path}"], cwd=_common.REPO).stdout
    spec = importlib.util.spec_from_loader(f"evidence_at_{rev}", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)
    return module


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--dirs", type=int, default=200)
    ap.add_argument("--marked", type=int, default=1000)
    ap.add_argument("--against", default="main", help="the commit whose tree_of is compared")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="tree-scale-")
    try:
        plain, marked = os.path.join(tmp, "plain"), os.path.join(tmp, "marked")
        build(plain, args.files, args.dirs)
        build(marked, args.files, args.dirs)
        names = _common.git(marked, "ls-files").split("\n")[: args.marked]
        _common.git(marked, "update-index", "--assume-unchanged", "--", *[n for n in names if n])
        old = _old_evidence(args.against)

        def timed(root: str, module: Any) -> float:
            start = time.perf_counter()
            tree = module.tree_of(os.path.join(root, "state"))
            took = time.perf_counter() - start
            if tree.sha is None:
                raise _common.BenchError(f"no tree: {tree.why}")
            return took

        got = _common.interleave(
            {
                "tree": lambda: timed(plain, evidence),
                f"tree[{args.against}]": lambda: timed(plain, old),
                "tree[marked]": lambda: timed(marked, evidence),
            },
            args.rounds,
            args.warmup,
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {name: _common.median(values) for name, values in got.items()}
    print(f"tree_scale: {args.files:,} files in {args.dirs} folders, {args.marked:,} marked; {_common.checkout()}")
    print(_common.load())
    print(_common.table(["variant", "median ms"], [[n, f"{v * 1000:.1f}"] for n, v in med.items()]))
    base = f"tree[{args.against}]"
    per_round = [a / b for a, b in zip(got["tree"], got[base], strict=True)]
    print(f"tree / {base} = {med['tree'] / med[base]:.3f} (median of per-round ratios {_common.median(per_round):.3f})")
    print(
        _common.reproduce(
            "tree_scale.py",
            [
                f"--files={args.files}",
                f"--dirs={args.dirs}",
                f"--marked={args.marked}",
                f"--against={args.against}",
                f"--rounds={args.rounds}",
                f"--warmup={args.warmup}",
            ],
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
