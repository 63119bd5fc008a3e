"""`git config user.email`, read from git's own config files without a git process (one spawn costs the hook path
~1.7 ms): direction tells one's own commits from others' by it.

Contract of `user_email(common, gitdir, env) -> str | None | Unknown`: the files in git's order, the last value
winning: the system file (GIT_CONFIG_SYSTEM, else /etc/gitconfig; none with GIT_CONFIG_NOSYSTEM), the global ones
(GIT_CONFIG_GLOBAL alone when set; else $XDG_CONFIG_HOME/git/config, or ~/.config/git/config, then ~/.gitconfig),
the repository's (common/config), the worktree's (gitdir/config.worktree). None: no file sets it (git config would
exit 1). UNKNOWN whenever these files might not say what git would: an include or includeIf, a config given in the
environment (GIT_CONFIG_COUNT, GIT_CONFIG_PARAMETERS), a file that cannot be read as text, a value on several lines
or with escapes. The caller then asks git.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_FILE = 1 << 20
UNKNOWN = object()  # the files cannot say: ask git


def user_email(common: str, gitdir: str, env: Mapping[str, str]) -> object:
    """user.email as git config would give it, None when unset, or UNKNOWN (see the module's docstring)."""
    if env.get("GIT_CONFIG_COUNT") or env.get("GIT_CONFIG_PARAMETERS"):
        return UNKNOWN
    found: object = None
    for path in _files(common, gitdir, env):
        value = _email(path)
        if value is UNKNOWN:
            return UNKNOWN
        if value is not None:
            found = value
    return found


def _files(common: str, gitdir: str, env: Mapping[str, str]) -> list[str]:
    home = env.get("HOME") or ""
    paths = []
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        paths.append(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    if env.get("GIT_CONFIG_GLOBAL"):
        paths.append(env["GIT_CONFIG_GLOBAL"])
    else:
        xdg = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
        paths += [os.path.join(xdg, "git", "config")] if xdg else []
        paths += [os.path.join(home, ".gitconfig")] if home else []
    return [*paths, os.path.join(common, "config"), os.path.join(gitdir, "config.worktree")]


def _email(path: str) -> object:
    """The last user.email one file sets: its value, None (not set, or no such file), or UNKNOWN."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return UNKNOWN
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return UNKNOWN
        raw = os.read(fd, MAX_FILE + 1)
    except OSError:
        return UNKNOWN
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE:
        return UNKNOWN
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return UNKNOWN
    return _parse(text)


def _parse(text: str) -> object:
    section = ""
    found: object = None
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            head = line[1:].split("]", 1)[0].strip().lower()
            if head.startswith(("include", "includeif")) or "]" not in line:
                return UNKNOWN
            section = head
            rest = line.split("]", 1)[1].strip()
            if rest and rest[0] not in "#;":
                return UNKNOWN  # a key on the header's line: not read here
            continue
        key, eq, value = line.partition("=")
        if section != "user" or key.strip().lower() != "email":
            continue
        if not eq or "\\" in value or value.rstrip().endswith("\\"):
            return UNKNOWN
        value = value.strip()
        if value.startswith('"'):
            end = value.find('"', 1)
            if end < 0:
                return UNKNOWN
            value = value[1:end]
        else:
            for mark in ("#", ";"):
                value = value.split(mark, 1)[0]
            value = value.strip()
        found = value
    return found
