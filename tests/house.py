"""The house's measures, read from the source with `ast` alone (the package is never imported, so a broken or slow
import cannot hide a measure): the tree with line counts, the import graph and its cycles, private names imported
across modules, arrows pointing up the layers, imports inside functions.

    python tests/house.py            a compact report
    python tests/house.py --json     the same as JSON
    python tests/house.py --root DIR measure another package folder (its folder name is the package's name)

Choices, and why:
- Every import counts, at module level, in a class body or inside a function: an import inside a function still runs,
  and still ties the two modules together. Imports under `if TYPE_CHECKING:` never run: they are counted on their own
  (`type_only`), left out of the measured cycles and arrows, and the cycles and arrows they would add are shown apart;
  the `else:` of such an `if` runs and counts.
- An import names one module: `import a.b.c` and `from a.b import c` (c a submodule) are an edge to a.b.c, `from a.b
  import name` an edge to a.b. The parent packages Python also runs are not edges: every module of a package whose
  __init__ imports one of its children would otherwise sit in a cycle with it, which is not a cycle of the design.
- `__import__(...)` and `importlib.import_module(...)` are reported as dynamic imports with the package their constant
  prefix names; they are not edges (which child runs is known only at run time) but an upward one still counts as an
  arrow pointing up, since whatever child it loads stands where its package stands.
- A private name is one with a leading underscore that is not a dunder. It crosses modules through `from m import _x`
  or through `m._x` where `m` is bound by an import (anywhere in the module) to one of the package's modules.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "rehydrate"
MAX_LINES = 450  # a module over this is too long to hold in one's head
MAX_PER_FOLDER = 14  # a folder directly holding more than this wants sub-folders

# The layers, highest first: a module may import its own layer and the ones below, never one above. The names are
# the first component under the package (a folder or a top-level module); unnamed components are not checked.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli", "mcp_server", "harness"),
    ("brief",),
    ("checks",),
    ("store",),
    ("fs",),
    ("errors", "text"),
)
# A component that stands above the named layer (and so above everything below it) without a place in the chain.
ABOVE: dict[str, str] = {"sync": "store"}
# A component that may import nothing but these (and itself).
ONLY: dict[str, tuple[str, ...]] = {"transcripts": ("text", "safejson")}
# Modules that belong to a component other than the folder they sit in today (longest dotted prefix wins), so that
# the arrows are measured against the layers the design asks for. An entry that names no module is reported as stale.
PLACED: dict[str, str] = {}


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    kind: str  # "module" (runs at import), "function" (runs when called) or "type" (under TYPE_CHECKING, never runs)


@dataclass(frozen=True)
class Dynamic:
    source: str
    line: int
    package: str | None  # the module or package its constant part names, None when nothing is known before run time
    call: str


@dataclass(frozen=True)
class Private:
    source: str
    target: str
    name: str
    line: int
    how: str  # "from" (from m import _x) or "attribute" (m._x)


@dataclass(frozen=True)
class Arrow:
    source: str
    target: str
    line: int
    rule: str  # "up" (a layer above) or "only" (outside what the component may import)


@dataclass
class Module:
    name: str
    path: Path
    lines: int
    is_package: bool
    imports: list[Import] = field(default_factory=list)
    dynamic: list[Dynamic] = field(default_factory=list)
    private: list[Private] = field(default_factory=list)
    function_imports: int = 0  # import statements inside functions, the standard library's and third parties' too


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def discover(root: Path) -> dict[str, Module]:
    package = root.name
    modules: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join([package, *parts])
        lines = len(path.read_text(encoding="utf-8").splitlines())
        modules[name] = Module(name, path, lines, is_package)
    return modules


class Reader:
    """One module's imports, dynamic imports, private names used across modules and function-level imports.

    Imports are statements, so the statements alone are walked for them (keeping track of functions and TYPE_CHECKING
    blocks); the expressions are walked once, and only in a module whose text could hold what is sought there: the
    parse is most of the cost, and a visitor over every node would double it."""

    def __init__(self, module: Module, known: dict[str, Module]) -> None:
        self.module = module
        self.known = known
        self.package = module.name if module.is_package else module.name.rpartition(".")[0]
        self.root = module.name.split(".")[0]  # the package measured: its imports are the graph's edges
        self.depth = 0  # functions entered
        self.typing = 0  # TYPE_CHECKING blocks entered
        self.aliases: dict[str, str] = {}  # a local name bound by an import to one of the package's modules

    def kind(self) -> str:
        return "type" if self.typing else "function" if self.depth else "module"

    def internal(self, dotted: str) -> bool:
        return dotted == self.root or dotted.startswith(self.root + ".")

    def longest_module(self, dotted: str) -> str | None:
        parts = dotted.split(".")
        while parts:
            if ".".join(parts) in self.known:
                return ".".join(parts)
            parts.pop()
        return None

    def edges(self, targets: list[str], line: int) -> None:
        """One statement's edges: one per module it names (`from m import a, b` is one edge to m)."""
        for target in dict.fromkeys(t for t in targets if t != self.module.name):
            self.module.imports.append(Import(self.module.name, target, line, self.kind()))

    def read(self, source: str) -> None:
        tree = ast.parse(source, str(self.module.path))
        self.statements(tree.body)
        if "._" in source or "__import__" in source or "import_module" in source:
            self.expressions(tree)

    def statements(self, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                self.take_import(node)
            elif isinstance(node, ast.ImportFrom):
                self.take_import_from(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.depth += 1
                self.statements(node.body)
                self.depth -= 1
            elif isinstance(node, ast.If) and is_type_checking(node.test):
                self.typing += 1
                self.statements(node.body)
                self.typing -= 1
                self.statements(node.orelse)
            else:
                for inner in nested(node):
                    self.statements(inner)

    def expressions(self, tree: ast.Module) -> None:
        private: list[ast.Attribute] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and is_private(node.attr):
                private.append(node)
            elif isinstance(node, ast.Call):
                self.take_call(node)
        # Every import of the module is known by now, wherever it stands relative to the use.
        for node in private:
            target = self.resolve(node.value)
            if target is not None and target != self.module.name:
                self.module.private.append(Private(self.module.name, target, node.attr, node.lineno, "attribute"))

    def take_import(self, node: ast.Import) -> None:
        self.count_function_import()
        targets: list[str] = []
        for alias in node.names:
            if not self.internal(alias.name):
                continue
            target = self.longest_module(alias.name)
            if target is None:
                continue
            targets.append(target)
            if alias.asname:
                self.aliases[alias.asname] = target
            else:
                self.aliases[alias.name.split(".")[0]] = self.root
        self.edges(targets, node.lineno)

    def take_import_from(self, node: ast.ImportFrom) -> None:
        self.count_function_import()
        base = self.absolute(node.level, node.module)
        if base is None or not self.internal(base):
            return
        targets: list[str] = []
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            if submodule in self.known:
                targets.append(submodule)
                self.aliases[alias.asname or alias.name] = submodule
                continue
            target = self.longest_module(base)
            if target is None:
                continue
            targets.append(target)
            if is_private(alias.name) and target != self.module.name and self.kind() != "type":
                self.module.private.append(Private(self.module.name, target, alias.name, node.lineno, "from"))
        self.edges(targets, node.lineno)

    def count_function_import(self) -> None:
        if self.depth and not self.typing:
            self.module.function_imports += 1

    def absolute(self, level: int, name: str | None) -> str | None:
        if level == 0:
            return name
        parts = self.package.split(".")
        if level - 1 >= len(parts):
            return None  # a relative import that climbs out of the package
        base = ".".join(parts[: len(parts) - (level - 1)])
        return f"{base}.{name}" if name else base

    def take_call(self, node: ast.Call) -> None:
        call = dynamic_call(node.func)
        if call and node.args:
            package = self.constant_prefix(node.args[0])
            if package is not None and package.startswith("."):
                package = self.absolute(len(package) - len(package.lstrip(".")), package.lstrip(".") or None)
            package = package.rstrip(".") if package else None
            internal = package is not None and self.internal(package)
            if internal or package is None:
                line = node.lineno
                self.module.dynamic.append(Dynamic(self.module.name, line, package if internal else None, call))

    def constant_prefix(self, arg: ast.expr) -> str | None:
        """The module name's part known before run time: a constant, or an f-string's leading text and
        `__name__`/`__package__`; None when nothing is known."""
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
        if not isinstance(arg, ast.JoinedStr):
            return None
        prefix = ""
        for value in arg.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                prefix += value.value
            elif isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name):
                if value.value.id == "__name__":
                    prefix += self.module.name
                elif value.value.id == "__package__":
                    prefix += self.package
                else:
                    break
            else:
                break
        if "." not in prefix:
            return None
        return prefix.rpartition(".")[0] if not prefix.endswith(".") else prefix

    def resolve(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is not None and f"{base}.{node.attr}" in self.known:
                return f"{base}.{node.attr}"
        return None


def is_type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:` (the house spells it `TYPE_CHECKING = False`)."""
    name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
    return name == "TYPE_CHECKING"


def nested(node: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists inside a compound statement (class, if, for, while, with, try, match)."""
    for name in ("body", "orelse", "finalbody"):
        inner = getattr(node, name, None)
        if isinstance(inner, list):
            yield inner
    for handler in getattr(node, "handlers", ()):
        yield handler.body
    for case in getattr(node, "cases", ()):
        yield case.body


def dynamic_call(func: ast.expr) -> str:
    if isinstance(func, ast.Name) and func.id in {"__import__", "import_module"}:
        return func.id
    if isinstance(func, ast.Attribute) and func.attr == "import_module":
        return "importlib.import_module"
    return ""


def read(modules: dict[str, Module]) -> None:
    for module in modules.values():
        Reader(module, modules).read(module.path.read_text(encoding="utf-8"))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iterative (no recursion limit); only those of two modules or more."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def component(module: str, package: str) -> str:
    """The module's place in the layers: its PLACED entry, else its first name under the package."""
    relative = module[len(package) + 1 :] if module != package else ""
    parts = relative.split(".")
    for end in range(len(parts), 0, -1):
        placed = PLACED.get(".".join(parts[:end]))
        if placed is not None:
            return placed
    return parts[0]


def height(name: str) -> int | None:
    for rank, layer in enumerate(LAYERS):
        if name in layer:
            return len(LAYERS) - rank
    return None


def broken_rule(source: str, target: str) -> str:
    """ "up", "only" or "" for an import from component `source` to component `target`."""
    if source == target:
        return ""
    if source in ONLY and target not in ONLY[source]:
        return "only"
    low, high = height(source), height(target)
    if low is not None and high is not None and high > low:
        return "up"
    if target in ABOVE and low is not None:
        floor = height(ABOVE[target])
        if floor is not None and low <= floor:
            return "up"
    return ""


def arrows(modules: dict[str, Module], package: str, kinds: set[str]) -> list[Arrow]:
    found: dict[tuple[str, str, str], Arrow] = {}
    pairs = [(i.source, i.target, i.line) for m in modules.values() for i in m.imports if i.kind in kinds]
    if kinds != {"type"}:
        pairs += [(d.source, d.package, d.line) for m in modules.values() for d in m.dynamic if d.package]
    for source, target, line in pairs:
        rule = broken_rule(component(source, package), component(target, package))
        if rule:
            found.setdefault((source, target, rule), Arrow(source, target, line, rule))
    return sorted(found.values(), key=lambda a: (a.rule, a.source, a.target))


def folder_of(module: Module, package: str) -> str:
    """The folder that directly holds the module's file, as a dotted path under the package ("" for the top)."""
    relative = module.name[len(package) + 1 :]
    parts = relative.split(".") if relative else []
    return ".".join(parts if module.is_package else parts[:-1])


@dataclass
class House:
    package: str
    modules: dict[str, Module]
    cycles: list[list[str]]
    cycles_with_types: list[list[str]]
    arrows: list[Arrow]
    type_arrows: list[Arrow]  # those of the imports under TYPE_CHECKING: they never run, so they are only shown
    stale_placed: list[str]

    def folders(self) -> dict[str, list[Module]]:
        grouped: dict[str, list[Module]] = {}
        for module in self.modules.values():
            grouped.setdefault(folder_of(module, self.package), []).append(module)
        return dict(sorted(grouped.items()))

    def private(self) -> list[Private]:
        return [p for m in self.modules.values() for p in m.private]

    def imports(self, kind: str) -> list[Import]:
        return [i for m in self.modules.values() for i in m.imports if i.kind == kind]

    def measures(self) -> dict[str, int]:
        """The numbers the ratchet holds: each may only go down."""
        lines = [m.lines for m in self.modules.values()]
        return {
            "max_module_lines": max(lines, default=0),
            "modules_over_max_lines": sum(n > MAX_LINES for n in lines),
            "max_modules_per_folder": max((len(ms) for ms in self.folders().values()), default=0),
            "folders_over_max_modules": sum(len(ms) > MAX_PER_FOLDER for ms in self.folders().values()),
            "cycles": len(self.cycles),
            "largest_cycle": max((len(c) for c in self.cycles), default=0),
            "modules_in_cycles": sum(len(c) for c in self.cycles),
            "private_imports": len(self.private()),
            "upward_arrows": sum(a.rule == "up" for a in self.arrows),
            "forbidden_arrows": sum(a.rule == "only" for a in self.arrows),
            "function_imports": sum(m.function_imports for m in self.modules.values()),
            "function_imports_internal": len({(i.source, i.line) for i in self.imports("function")}),
        }

    def as_json(self) -> dict[str, object]:
        return {
            "package": self.package,
            "measures": self.measures(),
            "limits": {"max_lines": MAX_LINES, "max_per_folder": MAX_PER_FOLDER},
            "modules": {m.name: m.lines for m in self.modules.values()},
            "folders": {f or ".": len(ms) for f, ms in self.folders().items()},
            "cycles": self.cycles,
            "cycles_with_type_only_imports": self.cycles_with_types,
            "private": [asdict(p) for p in self.private()],
            "arrows": [asdict(a) for a in self.arrows],
            "type_only_arrows": [asdict(a) for a in self.type_arrows],
            "function_imports_internal": [asdict(i) for i in self.imports("function")],
            "type_only_imports": [asdict(i) for i in self.imports("type")],
            "dynamic_imports": [asdict(d) for m in self.modules.values() for d in m.dynamic],
            "stale_placed": self.stale_placed,
        }


def graph_of(modules: dict[str, Module], kinds: set[str]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module in modules.values():
        graph[module.name] |= {i.target for i in module.imports if i.kind in kinds}
    return graph


def measure(root: Path = ROOT) -> House:
    modules = discover(root)
    read(modules)
    package = root.name
    runtime = graph_of(modules, {"module", "function"})
    everything = graph_of(modules, {"module", "function", "type"})
    placed = {component(m, package) for m in modules} | {m[len(package) + 1 :] for m in modules}
    stale = sorted(p for p in PLACED if p not in placed)
    found = arrows(modules, package, {"module", "function"})
    typed = arrows(modules, package, {"type"})
    return House(package, modules, cycles(runtime), cycles(everything), found, typed, stale)


def short(name: str, package: str) -> str:
    return name[len(package) + 1 :] or package


def wrap(items: Sequence[str], indent: str, width: int = 118) -> Iterator[str]:
    line = indent
    for item in items:
        if len(line) + len(item) + 2 > width and line.strip():
            yield line.rstrip()
            line = indent
        line += item + "  "
    if line.strip():
        yield line.rstrip()


def cell(module: Module) -> str:
    name = "__init__" if module.is_package else module.name.rpartition(".")[2]
    return f"{name} {module.lines}" + ("!" if module.lines > MAX_LINES else "")


def report(house: House) -> str:
    p = house.package
    out = [f"{p}: {len(house.modules)} modules, {sum(m.lines for m in house.modules.values())} lines"]
    for folder, members in house.folders().items():
        over = f"  (over {MAX_PER_FOLDER})" if len(members) > MAX_PER_FOLDER else ""
        out.append(f"{folder or '.'}/  {len(members)} modules, {sum(m.lines for m in members)} lines{over}")
        out.extend(wrap([cell(m) for m in members], "    "))
    out.append("")
    out.append("measures (the ratchet's; '!' above marks a module over the line limit):")
    out.extend(wrap([f"{k}={v}" for k, v in house.measures().items()], "  "))
    out.append(f"cycles (every import that runs, module level and in functions): {len(house.cycles)}")
    for cycle in house.cycles:
        out.extend(wrap([short(m, p) for m in cycle], f"  [{len(cycle)}] "))
    extra = len(house.cycles_with_types) - len(house.cycles)
    sizes = [len(c) for c in house.cycles_with_types]
    out.append(f"cycles counting TYPE_CHECKING imports too: {len(house.cycles_with_types)} ({extra:+d}), sizes {sizes}")
    out.append(f"private names imported across modules: {len(house.private())}")
    by_pair = Counter((short(x.source, p), short(x.target, p)) for x in house.private())
    names: dict[tuple[str, str], set[str]] = {}
    for x in house.private():
        names.setdefault((short(x.source, p), short(x.target, p)), set()).add(x.name)
    for (source, target), count in sorted(by_pair.items()):
        out.append(f"  {source} <- {target}: {count} ({', '.join(sorted(names[(source, target)]))})")
    for rule, title in (("up", "arrows pointing up"), ("only", "arrows outside what a component may import")):
        chosen = [a for a in house.arrows if a.rule == rule]
        out.append(f"{title}: {len(chosen)}")
        for arrow in chosen:
            where = f"{component(arrow.source, p)} -> {component(arrow.target, p)}"
            out.append(f"  {where}: {short(arrow.source, p)} -> {short(arrow.target, p)} (line {arrow.line})")
    internal = house.imports("function")
    out.append(
        f"imports inside functions: {house.measures()['function_imports']} statements, "
        f"{house.measures()['function_imports_internal']} of them to the package's own modules"
    )
    per_module = Counter(short(source, p) for source, _ in {(i.source, i.line) for i in internal})
    out.extend(wrap([f"{m} {n}" for m, n in sorted(per_module.items())], "  "))
    out.append(
        f"type-only imports (under TYPE_CHECKING, not in the graph): {len(house.imports('type'))}, "
        f"{len(house.type_arrows)} of them against the layers"
    )
    out.extend(wrap([f"{short(a.source, p)} -> {short(a.target, p)} ({a.rule})" for a in house.type_arrows], "  "))
    dynamic = [d for m in house.modules.values() for d in m.dynamic]
    out.append(f"dynamic imports: {len(dynamic)}")
    out.extend(
        wrap([f"{short(d.source, p)}:{d.line} -> {short(d.package, p) if d.package else '?'}" for d in dynamic], "  ")
    )
    if house.stale_placed:
        out.append(f"PLACED entries naming no module (remove them): {', '.join(house.stale_placed)}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the measures and their details as JSON")
    parser.add_argument("--root", type=Path, default=ROOT, help="the package folder to measure")
    args = parser.parse_args(argv)
    house = measure(args.root)
    print(json.dumps(house.as_json(), indent=1) if args.json else report(house))
    return 0


if __name__ == "__main__":
    sys.exit(main())
