"""Pure merges of a harness's settings files: JSON, JSON with comments (Gemini) and TOML (Codex).

Bytes in, bytes out, nothing written: install plans with these, checks that every result parses as the harness will
parse it, and only then writes. TOML is edited through tomlkit, which keeps the user's formatting, comments and
inline tables; it is imported here only, on install's path, never on the hook path.
"""

from __future__ import annotations

import json
import re

from rehydrate import safejson
from rehydrate.errors import RehydrateError

TYPE_CHECKING = False
if TYPE_CHECKING:
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
        if current is not None:
            del tables[name]
        tables[name] = _toml_table(kit, value, inline=inline)
    new = kit.dumps(doc)
    if not text.strip():
        new = new.lstrip("\n")
    new = re.sub(r"\n{3,}", "\n\n", new) if "\n\n\n" not in text else new
    if not new.strip() and old is not None:
        return None  # it held nothing but our table
    return new.encode("utf-8", "surrogateescape")


def _toml_table(kit: Any, value: dict[str, Any], *, inline: bool) -> Any:
    table = kit.inline_table() if inline else kit.table()
    for k, v in value.items():
        table[k] = v
    return table


if TYPE_CHECKING:
    from collections.abc import Callable
