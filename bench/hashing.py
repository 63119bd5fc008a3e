"""sha256 per Python version: CPython's built-in module (_sha256, _sha2 from 3.12 on: HACL*) against OpenSSL's
(hashlib), and what importing hashlib costs a process (it loads OpenSSL): the figures behind store/wal/digest.py's
choice.

For each interpreter (by default this one and every python3.10 to python3.13 found under pyenv or on PATH), a child
process times both hashes on inputs of 200 B, 700 B (a typical record), 2 KB, 1 MB and 100 MB (--big), interleaved
round by round (order rotating; the median of the rounds); then --imports fresh processes each time
`import hashlib` (the median and the spread). Prints a table per interpreter, the load average and the command.

    python bench/hashing.py [--python PATH ...] [--rounds 7] [--imports 15]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import sys
from collections.abc import Sequence

import _common

CHILD = r"""
import json, sys, time
try:
    from _sha2 import sha256 as builtin
except ImportError:
    from _sha256 import sha256 as builtin
import hashlib
openssl = hashlib.sha256
rounds = int(sys.argv[1])
out = {"version": sys.version.split()[0], "sizes": {}}
for size in (200, 700, 2000, 1 << 20, int(sys.argv[2]) << 20):
    data = b"\x5a" * size
    n = max(1, (8 << 20) // size)
    times = {"builtin": [], "openssl": []}
    for r in range(rounds + 1):
        for name in (("builtin", "openssl") if r % 2 else ("openssl", "builtin")):
            f = builtin if name == "builtin" else openssl
            t0 = time.perf_counter()
            for _ in range(n):
                f(data).hexdigest()
            if r:
                times[name].append((time.perf_counter() - t0) / n)
    out["sizes"][size] = times
print(json.dumps(out))
"""
IMPORT = "import time; t0 = time.perf_counter(); import hashlib; print(time.perf_counter() - t0)"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/hashing.py", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--python", action="append", help="an interpreter to measure (repeatable; default: found ones)")
    p.add_argument("--rounds", type=int, default=7, help="measured rounds per size (default 7)")
    p.add_argument("--big", type=int, default=100, help="the large input, in MB (default 100)")
    p.add_argument("--imports", type=int, default=15, help="fresh processes timing `import hashlib` (default 15)")
    return p.parse_args(argv)


def interpreters() -> list[str]:
    """This interpreter, then python3.10 to 3.13 from pyenv's versions, else from PATH (one per minor version)."""
    found = {sys.version_info[:2]: sys.executable}
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for minor in range(10, 14):
        if (3, minor) in found:
            continue
        pattern = os.path.join(root, "versions", f"3.{minor}.*", "bin", "python")
        candidates = sorted(glob.glob(pattern)) or [p for p in [shutil.which(f"python3.{minor}")] if p]
        if candidates:
            found[(3, minor)] = candidates[-1]
    return [found[k] for k in sorted(found)]


def measure(python: str, rounds: int, big: int, imports: int) -> tuple[dict[str, object], list[float]]:
    env = _common.clean_env()
    out = json.loads(_common.run([python, "-c", CHILD, str(rounds), str(big)], env=env).stdout)
    costs = [float(_common.run([python, "-c", IMPORT], env=env).stdout) for _ in range(imports)]
    return out, costs


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n} B"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    pythons = args.python or interpreters()
    print("sha256: the built-in module against OpenSSL (hashlib), per interpreter; medians of interleaved rounds")
    print(_common.load())
    for python in pythons:
        out, costs = measure(python, args.rounds, args.big, args.imports)
        print()
        print(f"Python {out['version']} ({python})")
        rows = []
        sizes = out["sizes"]
        assert isinstance(sizes, dict)
        for size, times in sizes.items():
            b, o = statistics.median(times["builtin"]), statistics.median(times["openssl"])
            n = int(size)
            rows.append(
                (
                    _size(n),
                    f"{b * 1e6:,.2f}",
                    f"{o * 1e6:,.2f}",
                    f"{n / b / 1e6:,.0f}",
                    f"{n / o / 1e6:,.0f}",
                    f"{b / o:.2f}",
                )
            )
        head = ["input", "built-in us", "OpenSSL us", "built-in MB/s", "OpenSSL MB/s", "built-in/OpenSSL"]
        print(_common.table(head, rows))
        spread = f"{min(costs) * 1e3:.2f}-{max(costs) * 1e3:.2f}"
        print(f"import hashlib in a fresh process: median {statistics.median(costs) * 1e3:.2f} ms ({spread} ms)")
    print()
    print(_common.load())
    options = [f"--rounds={args.rounds}", f"--big={args.big}", f"--imports={args.imports}"] + [
        f"--python={p}" for p in args.python or []
    ]
    print("reproduce: " + _common.reproduce("hashing.py", options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
