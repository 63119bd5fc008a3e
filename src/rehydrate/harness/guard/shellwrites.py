"""What a shell command writes, read before it runs, for the guard: the files it names as targets, as a POSIX shell
splits it (the standard library's shlex with punctuation_chars: quotes, escapes, operators and redirections), never
by regular expressions over the text, and resolved against the folder each part runs in (`cd DIR &&` moves it).

What is read: redirections (`>`, `>>`, `>|`, `&>`, `N>`, `<>`), `tee [-a]`, the destination of cp/mv/install/ln (and
mv's sources, which it removes), `dd of=`, truncate/rm/unlink/shred/touch's operands, `sed -i`/`perl -i`'s files,
`sh -c`/`bash -c`/`eval` (their string read as a command, a few levels deep), and the paths that the code given to an
interpreter (`python -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`) names. A target that names a folder being
removed or moved (`rm -r calc`) covers what is inside it.

What cannot be read before the command runs: a path built at run time (`$F`, `$(...)`, a script's own writes, a
program that writes files by itself), content arriving through a pipe. The guard's check after the call (by effect)
sees those: this is the cheap first look, not the guarantee.
"""

from __future__ import annotations

import glob
import itertools
import os
import shlex

MAX_DEPTH = 3  # `sh -c "bash -c '...'"`: strings read as commands this deep, no deeper
MAX_WORDS = 20000  # a command longer than this is read in its first MAX_WORDS words
MAX_GLOB = 256  # the files a glob in a target expands to, at most
PUNCTUATION = "();<>|&\n"
WRAPPERS = ("sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "ionice", "stdbuf",
            "timeout", "xargs", "chronic", "unbuffer")  # fmt: skip
SHELLS = ("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox")
CODE_FLAGS = {"python": ("-c",), "node": ("-e", "-p", "--eval", "--print"), "nodejs": ("-e", "-p", "--eval"),
              "deno": ("eval",), "bun": ("-e", "--eval"), "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",),
              "lua": ("-e",), "Rscript": ("-e",), "osascript": ("-e",)}  # fmt: skip
REMOVERS = ("rm", "unlink", "shred", "truncate", "touch", "rmdir")


class Writes:
    """A command's targets: `paths` it writes or removes (absolute, normalized, symbolic links not yet resolved),
    `trees` (folders removed or moved whole: what is inside them is written too), `mentions` (paths named by code
    given to an interpreter), `sources` (files whose bytes a copy or a move puts into a target)."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.trees: list[str] = []
        self.mentions: list[str] = []
        self.sources: list[str] = []


def writes(command: str, cwd: str, depth: int = 0, out: Writes | None = None) -> Writes:
    """The files the command writes, read as a POSIX shell reads it, from cwd."""
    out = out if out is not None else Writes()
    words = split(command)
    base = cwd
    for simple in _commands(words):
        base = _command(simple, base, depth, out)
    return out


def split(command: str) -> list[str]:
    """The command's words and operators (a newline is one, as `;`), as far as it splits: an open quote ends it, the
    words before kept (a shell would refuse the command; the guard still reads what it can)."""
    lex = shlex.shlex(command, posix=True, punctuation_chars=PUNCTUATION)
    lex.whitespace = " \t\r"
    lex.whitespace_split = True
    words: list[str] = []
    try:
        for word in lex:
            words.append(word)
            if len(words) >= MAX_WORDS:
                break
    except ValueError:  # no closing quotation: what came before it
        pass
    return words


def _is_operator(word: str) -> bool:
    return bool(word) and not word.strip(PUNCTUATION)


def _commands(words: list[str]) -> list[list[str]]:
    """The simple commands, each with its redirections: split at every operator that is not a redirection."""
    out: list[list[str]] = [[]]
    for word in words:
        if _is_operator(word) and ">" not in word and "<" not in word:
            out.append([])
        else:
            out[-1].append(word)
    return [c for c in out if c]


def _command(words: list[str], base: str, depth: int, out: Writes) -> str:
    """One simple command's targets added to out; the folder the next one runs in (`cd` moves it)."""
    args: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if _is_operator(word) and ">" in word:
            target = words[i + 1] if i + 1 < len(words) else ""
            if not (word.endswith("&") and (target.isdigit() or target == "-")):  # `2>&1` duplicates, writes nothing
                _add(out.paths, target, base)
            i += 2
            continue
        if _is_operator(word):  # `<`, `<<`, `<<<`: what follows is read, not written
            i += 2
            continue
        if word.isdigit() and i + 1 < len(words) and _is_operator(words[i + 1]):
            i += 1  # `2>`: the descriptor of a redirection (shlex splits it off), not a word of the command
            continue
        args.append(word)
        i += 1
    args = _unwrapped(args)
    if not args:
        return base
    name = os.path.basename(args[0])
    rest = args[1:]
    if name in ("cd", "pushd"):
        return _cd(rest, base)
    _targets(name, rest, base, depth, out)
    return base


def _unwrapped(args: list[str]) -> list[str]:
    """The command a wrapper runs (`sudo`, `env X=1`, `timeout 5`, `nice -n 5`), its leading assignments left out."""
    while args:
        first = args[0]
        if "=" in first and first.split("=", 1)[0].replace("_", "a").isalnum() and not first[0].isdigit():
            args = args[1:]  # VAR=value before the command
            continue
        if os.path.basename(first) not in WRAPPERS:
            return args
        args = args[1:]
        while args and (args[0].startswith("-") or "=" in args[0] or args[0].replace(".", "").isdigit()):
            args = args[1:]  # its options, assignments, durations and priorities
    return args


def _cd(rest: list[str], base: str) -> str:
    operands = [a for a in rest if not a.startswith("-") or a == "-"]
    if not operands:
        return os.path.expanduser("~")
    where = operands[0]
    if where == "-" or "$" in where or "`" in where:
        return base  # a folder known only at run time: the guard's check after the call sees what it writes
    return os.path.normpath(os.path.join(base, os.path.expanduser(where)))


def _operands(rest: list[str], takes_value: tuple[str, ...] = ()) -> list[str]:
    """The words that are not options (everything after `--` is one), options that take a value skipped with it."""
    out: list[str] = []
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--":
            return out + rest[i + 1 :]
        if word.startswith("-") and word != "-":
            if word in takes_value:
                i += 1
        else:
            out.append(word)
        i += 1
    return out


def _targets(name: str, rest: list[str], base: str, depth: int, out: Writes) -> None:
    """The files one command (its name and its words) writes, by what the command is known to do."""
    if name == "tee":
        for word in _operands(rest):
            _add(out.paths, word, base)
    elif name in ("cp", "mv", "install", "ln"):
        _copy(name, rest, base, out)
    elif name == "dd":
        for word in rest:
            if word.startswith("of="):
                _add(out.paths, word[3:], base)
    elif name in REMOVERS:
        _removed(name, rest, base, out)
    elif name in ("sed", "gsed") and any(w.startswith("-i") or w.startswith("--in-place") for w in rest):
        _sed(rest, base, out)
    elif name in SHELLS or name == "eval":
        code = " ".join(rest) if name == "eval" else _code(rest, ("-c",))
        if code is not None and depth < MAX_DEPTH:
            writes(code, base, depth + 1, out)
    else:
        _interpreted(name, rest, base, out)


def _removed(name: str, rest: list[str], base: str, out: Writes) -> None:
    """rm, unlink, shred, truncate, touch, rmdir: their operands (recursive: each a folder removed whole)."""
    recursive = any(w.startswith("-") and not w.startswith("--") and ("r" in w or "R" in w) for w in rest)
    recursive = recursive or "--recursive" in rest
    for word in _operands(rest, ("-s", "--size", "-r", "-d", "-t") if name in ("truncate", "touch") else ()):
        _add(out.trees if recursive else out.paths, word, base)


def _sed(rest: list[str], base: str, out: Writes) -> None:
    """sed -i: the files it edits in place (its first operand is the script, unless -e or -f gave one)."""
    files = _operands(rest, ("-e", "-f", "--expression", "--file", "-l"))
    scripted = any(w in ("-e", "-f", "--expression", "--file") or w.startswith("--expression=") for w in rest)
    for word in files if scripted else files[1:]:
        _add(out.paths, word, base)


def _copy(name: str, rest: list[str], base: str, out: Writes) -> None:
    """cp, mv, install, ln: the destination (a folder: each source's name in it; `-t DIR` names it first); mv also
    removes its sources."""
    target_dir = None
    for i, word in enumerate(rest):
        if word in ("-t", "--target-directory") and i + 1 < len(rest):
            target_dir = rest[i + 1]
        elif word.startswith("--target-directory="):
            target_dir = word.split("=", 1)[1]
    words = [w for w in _operands(rest, ("-t", "--target-directory", "-m", "--mode", "-o", "-g", "-S", "--suffix"))]
    if target_dir is not None:
        words = [w for w in words if w != target_dir]
        sources, dest = words, target_dir
    elif len(words) >= 2:
        sources, dest = words[:-1], words[-1]
    else:
        return
    folder = os.path.join(base, os.path.expanduser(dest))
    if target_dir is not None or os.path.isdir(folder) or dest.endswith("/"):
        for source in sources:
            _add(out.paths, os.path.join(dest, os.path.basename(source.rstrip("/"))), base)
    else:
        _add(out.paths, dest, base)
    for source in sources:
        _add(out.sources, source, base)
        if name == "mv":
            _add(out.trees, source, base)


def _code(rest: list[str], flags: tuple[str, ...]) -> str | None:
    """The code an interpreter is given on its command line: the word after one of flags (or after a short flag
    group ending in it: `-lc`, `-pe`), or the flag's `=value`."""
    for i, word in enumerate(rest):
        for flag in flags:
            if word == flag or (
                len(flag) == 2 and word.startswith("-") and not word.startswith("--") and word.endswith(flag[1])
            ):
                return rest[i + 1] if i + 1 < len(rest) else None
            if flag.startswith("--") and word.startswith(flag + "="):
                return word[len(flag) + 1 :]
    return None


def _interpreted(name: str, rest: list[str], base: str, out: Writes) -> None:
    """An interpreter given code (`python -c`, `node -e`, ...): the paths its code names; `perl -i`/`ruby -i` edit
    their file operands in place."""
    key = name
    for prefix in ("python", "pypy", "perl", "ruby", "php", "node", "lua"):
        if name.startswith(prefix):  # python3, python3.12, perl5.36
            key = "python" if prefix == "pypy" else prefix
    flags = CODE_FLAGS.get(key)
    if flags is None:
        return
    code = _code(rest, flags)
    if code is None:
        return
    for word in mentioned(code):
        _add(out.mentions, word, base)
    if key in ("perl", "ruby") and any(w.startswith("-") and "i" in w and not w.startswith("--") for w in rest):
        after = rest[rest.index(code) + 1 :] if code in rest else []
        for word in _operands(after):
            _add(out.paths, word, base)


def mentioned(code: str) -> list[str]:
    """The words of a program's text that could be paths: split at quotes, brackets, commas and spaces, kept when
    they hold a `/` or a `.` (a file name), at most MAX_WORDS of them."""
    table = str.maketrans({c: " " for c in "'\"`()[]{},;+=:\n\t\r"})
    words = [w for w in code.translate(table).split(" ") if w and ("/" in w or "." in w)]
    return words[:MAX_WORDS]


def _add(into: list[str], word: str, base: str) -> None:
    """A target word as an absolute path from base (`~` expanded; a glob expanded against the disk, MAX_GLOB files at
    most, the pattern kept too). A word holding `$` or a backquote is kept as written: only run time knows it."""
    if not word or word in ("-", "/dev/null", "/dev/stdout", "/dev/stderr"):
        return
    if "$" in word or "`" in word:
        into.append(word)
        return
    path = os.path.normpath(os.path.join(base, os.path.expanduser(word)))
    into.append(path)
    if any(c in word for c in "*?["):
        into.extend(os.path.normpath(p) for p in itertools.islice(glob.iglob(path), MAX_GLOB))
