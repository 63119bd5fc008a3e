"""Pure merges of a harness's settings files: JSON, JSON with comments (Gemini) and TOML (Codex): rehydrate's hooks,
its MCP server, a file it owns whole.

Bytes in, bytes out, nothing written: install plans with these, checks that every result parses as the harness will
parse it, and only then writes. TOML is edited through tomlkit, which keeps the user's formatting, comments and
inline tables; it is imported here only, on install's path, never on the hook path.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex

from rehydrate import safejson
from rehydrate.errors import RehydrateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

FIX = "fix it by hand, then install again"

_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S)


def strip_comments(text: str) -> str:
    """JSON with `//` and `/* */` comments (as Gemini CLI reads its settings): each comment blanked to spaces, its
    newlines kept, so that every other character keeps its offset. Strings are left alone."""

    def blank(m: re.Match[str]) -> str:
        s = m.group(0)
        return s if s.startswith('"') else re.sub(r"[^\n]", " ", s)

    return _JSON_TOKEN.sub(blank, text)


def has_comments(data: bytes | None) -> bool:
    if not data:
        return False
    text = data.decode("utf-8", "replace")
    return strip_comments(text) != text


def load_json(old: bytes | None, *, comments: bool = False) -> dict[str, Any]:
    """The JSON object a settings file holds ({} for an absent or empty one); comments allowed where the harness
    allows them. RehydrateError when it is not a JSON object."""
    try:
        text = old.decode("utf-8") if old else ""
        if comments:
            text = strip_comments(text)
        data = safejson.loads(text) if text.strip() else {}
    except (UnicodeDecodeError, ValueError) as e:
        raise RehydrateError(f"the file is not valid JSON ({e})", FIX) from None
    if not isinstance(data, dict):
        raise RehydrateError("the file does not hold a JSON object", FIX)
    return data


def dump_json(data: dict[str, Any], old: bytes | None, *, comments: bool = False) -> bytes | None:
    """The settings as JSON. Where the old file has comments and the change is a new top-level key, the key is
    inserted into the old text so that the comments stay; otherwise the file is written anew."""
    if not data and (old is None or not old.strip()):
        return old
    if comments and old and has_comments(old):
        kept = _insert_keys(old, data)
        if kept is not None:
            return kept
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def _insert_keys(old: bytes, data: dict[str, Any]) -> bytes | None:
    """old with the keys of data it lacks inserted after its opening brace, or None when that is not the change."""
    try:
        before = load_json(old, comments=True)
    except RehydrateError:
        return None
    new_keys = [k for k in data if k not in before]
    if not new_keys or any(before[k] != data[k] for k in before if k in data) or set(before) - set(data):
        return None
    text = old.decode("utf-8")
    plain = strip_comments(text)
    brace = plain.find("{")
    if brace < 0:
        return None
    empty = plain[brace + 1 :].lstrip().startswith("}")
    parts = []
    for i, key in enumerate(new_keys):
        value = json.dumps(data[key], indent=2, ensure_ascii=False).replace("\n", "\n  ")
        last = i == len(new_keys) - 1
        parts.append(f"\n  {json.dumps(key, ensure_ascii=False)}: {value}{'' if last and empty else ','}")
    new = (text[: brace + 1] + "".join(parts) + ("\n" if empty else "") + text[brace + 1 :]).encode()
    try:
        if load_json(new, comments=True) != data:
            return None
    except RehydrateError:
        return None
    return new


def check_json(data: bytes | None, *, comments: bool = False) -> None:
    """RehydrateError unless data parses as the harness will parse it (a guard against our own bugs)."""
    if data is not None:
        load_json(data, comments=comments)


# ------------------------------------------------------------------------------------------------ TOML


def _tomlkit() -> Any:
    import tomlkit  # a dependency of rehydrate, imported on install's path only (never by a hook)

    return tomlkit


def parse_toml(text: str) -> dict[str, Any]:
    """A TOML document as plain data; RehydrateError naming the problem when it is not valid TOML."""
    try:
        return dict(_tomlkit().parse(text).unwrap())
    except Exception as e:  # tomlkit raises its own error types, all ValueErrors or near
        raise RehydrateError(f"the file is not valid TOML ({e})", FIX) from None


def check_toml(data: bytes | None) -> None:
    if data is not None:
        parse_toml(data.decode("utf-8", "surrogateescape"))


def merge_toml_table(
    old: bytes | None,
    parent: str,
    name: str,
    value: dict[str, Any] | None,
    *,
    ours: Callable[[Any], bool],
) -> bytes | None:
    """`[parent.name]` set to value (None: taken out) in a TOML file through tomlkit, every other byte kept where
    the library can keep it. A table of that name that `ours` does not recognise is refused, never replaced.
    An inline `parent = { ... }` stays inline."""
    kit = _tomlkit()
    text = (old or b"").decode("utf-8", "surrogateescape")
    try:
        doc = kit.parse(text)
    except Exception as e:
        raise RehydrateError(f"the file is not valid TOML ({e})", FIX) from None
    tables = doc.get(parent)
    if tables is not None and not isinstance(tables, dict):
        raise RehydrateError(f"its `{parent}` is not a table", FIX)
    current = tables.get(name) if tables is not None else None
    if current is not None:
        plain = current.unwrap() if hasattr(current, "unwrap") else current
        if not ours(plain):
            raise RehydrateError(f"it defines [{parent}.{name}] already", "remove that table, then install again")
        if value is not None and plain == value:
            return old  # already as it should be: not a byte changes
    elif value is None:
        return old
    _set_table(kit, doc, tables, parent, name, value, current is not None)
    new = kit.dumps(doc)
    if not text.strip():
        new = new.lstrip("\n")
    new = re.sub(r"\n{3,}", "\n\n", new) if "\n\n\n" not in text else new
    if not new.strip() and old is not None:
        return None  # it held nothing but our table
    return new.encode("utf-8", "surrogateescape")


def _set_table(
    kit: Any, doc: Any, tables: Any, parent: str, name: str, value: dict[str, Any] | None, present: bool
) -> None:
    """doc's [parent.name] set to value, or taken out (value None; then `tables` holds it)."""
    if value is None:
        assert tables is not None
        del tables[name]
        if not tables:
            del doc[parent]
    elif tables is None:
        group = kit.table(is_super_table=True)
        group[name] = _toml_table(kit, value, inline=False)
        doc[parent] = group
    else:
        inline = isinstance(tables, kit.items.InlineTable)
        if present:
            del tables[name]
        tables[name] = _toml_table(kit, value, inline=inline)


def _toml_table(kit: Any, value: dict[str, Any], *, inline: bool) -> Any:
    table = kit.inline_table() if inline else kit.table()
    for k, v in value.items():
        table[k] = v
    return table


def check_parses(path: str, data: bytes | None) -> None:
    """RehydrateError unless the file as install would write it parses as its harness will parse it (a .json in a
    .gemini folder is JSON with comments)."""
    if data is None:
        return
    if path.endswith(".toml"):
        check_toml(data)
    elif path.endswith(".json"):
        check_json(data, comments=with_comments(path))


def with_comments(path: str) -> bool:
    """Whether a settings file is read as JSON with comments: Gemini CLI's (in a .gemini folder)."""
    return os.path.basename(os.path.dirname(path)) == ".gemini"


# ------------------------------------------------------------------------------------------------ the merges

COMMAND = "rehydrate hook"  # the bare command; an entry whose program is any `rehydrate` running `hook` is ours
MCP_SERVER = {"command": "rehydrate", "args": ["mcp"]}
TOML_BEGIN = "# rehydrate:begin (managed by rehydrate; edits inside this block are replaced)"
TOML_END = "# rehydrate:end"


def is_our_command(command: object) -> bool:
    """Exactly rehydrate's hook command: `rehydrate hook HARNESS [EVENT]`, the program named bare or by a path (quoted
    or not), and nothing else: a command that wraps it (`rehydrate hook claude; curl ... | sh`) is not rehydrate's,
    since the harness would run all of it (the settings file may have come by a pull)."""
    argv = _words(command)
    if argv is None or len(argv) not in (3, 4):
        return False
    if os.path.basename(argv[0]) != "rehydrate" or argv[1] != "hook":
        return False
    return all(word and (word[0].isalnum() or word[0] in "/._~") for word in argv) and all(
        w.replace("_", "").isalnum() for w in argv[2:]
    )


def is_our_powershell(command: object) -> bool:
    """Exactly rehydrate's hook command as PowerShell runs it (program.Program.powershell): `& '<path>' hook HARNESS
    [EVENT]`, the path a single-quoted string ('' for a quote in it), or the bare form is_our_command takes."""
    text = str(command)
    if not text.startswith("& '"):
        return is_our_command(text)
    at, path = 3, []
    while True:  # the quoted path: '' is one quote, a lone ' ends it
        end = text.find("'", at)
        if end < 0:
            return False
        path.append(text[at:end])
        if text[end + 1 : end + 2] != "'":
            break
        path.append("'")
        at = end + 2
    rest = text[end + 1 :].split(" ")
    name = os.path.basename("".join(path))
    return (
        name == "rehydrate"
        and rest[:1] == [""]
        and len(rest) in (3, 4)
        and rest[1] == "hook"
        and all(w.replace("_", "").isalnum() for w in rest[2:])
    )


def mentions_our_command(command: object) -> bool:
    """A command that runs `rehydrate hook` among other things (is_our_command says whether it is only that)."""
    argv = _words(command)
    return argv is not None and any(
        os.path.basename(w) == "rehydrate" and argv[i + 1 : i + 2] == ["hook"] for i, w in enumerate(argv)
    )


def _words(command: object) -> list[str] | None:
    """A command line's words as a POSIX shell splits them, its operators (`;`, `|`, `&&`, `>`, ...) as words of their
    own; None for one that does not split (an open quote)."""
    try:
        lex = shlex.shlex(str(command), posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        return list(lex)
    except ValueError:
        return None


def _ours(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    if not isinstance(hooks, list) or not hooks:
        return False
    return all(isinstance(h, dict) and is_our_command(h.get("command", "")) for h in hooks)


def hook_group(matcher: str, command: str, timeout: int) -> list[dict[str, Any]]:
    """One group of a hooks table: a matcher and one command hook."""
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]


def merge_hooks(
    old: bytes | None, events: dict[str, list[dict[str, Any]]], *, remove: bool, comments: bool = False
) -> bytes | None:
    """A settings file with rehydrate's hook groups in (or out), every other key and hook kept (comments too, where
    the harness allows them and the change is a new `hooks` key)."""
    data = load_json(old, comments=comments)
    before = copy.deepcopy(data)  # not a second parse
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise RehydrateError("its `hooks` is not a JSON object", FIX)
    for event in list(hooks):
        if isinstance(hooks[event], list):
            hooks[event] = [g for g in hooks[event] if not _ours(g)]
            if not hooks[event]:
                del hooks[event]
    if not remove:
        for event, groups in events.items():
            hooks.setdefault(event, []).extend(groups)
    if hooks:
        data["hooks"] = hooks
    else:
        data.pop("hooks", None)
    if data == before:
        return old  # nothing to do: the user's formatting stays, byte for byte
    return dump_json(data, old, comments=comments)


def merge_flat_hooks(
    old: bytes | None, events: dict[str, list[dict[str, Any]]], *, remove: bool, key: str = "command"
) -> bytes | None:
    """A hooks file of flat entries (`{"version": 1, "hooks": {event: [{"command": ...}, ...]}}`: Cursor's) with
    rehydrate's entries in (or out), every other entry and key kept; a file left with nothing but its version is
    removed."""
    data = load_json(old, comments=False)
    before = copy.deepcopy(data)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise RehydrateError("its `hooks` is not a JSON object", FIX)
    for event in list(hooks):
        if isinstance(hooks[event], list):
            hooks[event] = [e for e in hooks[event] if not (isinstance(e, dict) and is_our_command(e.get(key, "")))]
            if not hooks[event]:
                del hooks[event]
    if not remove:
        for event, entries in events.items():
            if not isinstance(hooks.setdefault(event, []), list):
                raise RehydrateError(f"its `hooks.{event}` is not a JSON array", FIX)
            hooks[event].extend(entries)
    if hooks:
        data["hooks"] = hooks
        data.setdefault("version", 1)
    else:
        data.pop("hooks", None)
        if remove and set(data) <= {"version"}:
            return None
    if data == before:
        return old
    return dump_json(data, old, comments=False)


def merge_owned(old: bytes | None, content: str, *, remove: bool) -> bytes | None:
    """A file rehydrate owns whole."""
    return None if remove else content.encode()


def merge_mcp_json(
    old: bytes | None, *, remove: bool, command: str = "rehydrate", comments: bool = False
) -> bytes | None:
    """`mcpServers.rehydrate` in a JSON file (.mcp.json, Gemini's settings.json), the rest kept."""
    data = load_json(old, comments=comments)
    before = copy.deepcopy(data)
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise RehydrateError("its `mcpServers` is not a JSON object", FIX)
    servers.pop("rehydrate", None)
    if not remove:
        servers["rehydrate"] = {**MCP_SERVER, "command": command}
    if servers:
        data["mcpServers"] = servers
    else:
        data.pop("mcpServers", None)
    if remove and not data and old is not None:
        return None  # it held nothing but rehydrate's server
    if data == before:
        return old  # nothing to do: the user's formatting stays, byte for byte
    return dump_json(data, old, comments=comments)


def _our_server(table: Any) -> bool:
    """A `[mcp_servers.rehydrate]` that an install wrote: only a command naming a `rehydrate` and `args = ["mcp"]`."""
    return (
        isinstance(table, dict)
        and set(table) == {"command", "args"}
        and os.path.basename(str(table["command"])) == "rehydrate"
        and table["args"] == ["mcp"]
    )


def merge_mcp_toml(old: bytes | None, *, remove: bool, command: str = "rehydrate") -> bytes | None:
    """`[mcp_servers.rehydrate]` in Codex's config.toml, edited through tomlkit (an inline `mcp_servers = {...}`
    gets an inline entry); a marked block an older install appended is taken out first."""
    text = (old or b"").decode("utf-8", "surrogateescape")
    start = text.find(TOML_BEGIN)
    end = text.find(TOML_END, start + 1) if start >= 0 else -1
    if start >= 0 and end >= 0:  # written by an older install as a marked block: ours, taken out as text
        after = end + len(TOML_END)
        after += 1 if text[after : after + 1] == "\n" else 0
        text = text[:start].rstrip("\n") + ("\n" if text[:start].strip() else "") + text[after:]
    rest = None if old is None or (not text.strip() and start >= 0) else text.encode("utf-8", "surrogateescape")
    value = None if remove else {"command": command, "args": ["mcp"]}
    return merge_toml_table(rest, "mcp_servers", "rehydrate", value, ours=_our_server)
