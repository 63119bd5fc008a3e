"""A message as a file: its name (`<ts>-<from>-<id>.md` under mail/<to>/), its header and text, read from git's
untrusted copy (never through a link, never blocking on a FIFO, at most MAX_BYTES, checked against its name, its folder
and its hash); and the writes: a message created once (then its `mail` record), a `read` record."""

from __future__ import annotations

import os
import stat

from rehydrate.errors import RehydrateError, UsageError
from rehydrate.fs import create as fscreate
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, layout
from rehydrate.store.wal import record as wal
from rehydrate.text import cap, clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.session import Outcome
    from rehydrate.store.state import State

MAIL_DIR = layout.MAIL_DIR
ALL = "all"
KINDS = ("redirect", "blocker", "actionable", "fyi")  # the order messages are shown in
URGENT = ("redirect", "blocker")  # an unread one degrades the mailbox check
MAX_BYTES = layout.MAX_FIELD * 4 + 1024  # a message file larger than this is named and skipped
_HEADER = ("from", "to", "kind", "ts", "id", "sha256")
_HEX = frozenset("0123456789abcdef")


class Message:
    """One message as read from its file (every field untrusted but checked against its name and hash)."""

    def __init__(self, fields: dict[str, str], text: str, rel: str) -> None:
        self.sender = fields["from"]
        self.to = fields["to"]
        self.kind = fields["kind"]
        self.ts = fields["ts"]
        self.id = fields["id"]
        self.text = text
        self.rel = rel  # state/mail/<to>/<file>

    def order(self) -> tuple[int, str, str]:
        return (KINDS.index(self.kind), self.ts, self.id)

    def as_dict(self, read: bool) -> dict[str, Any]:
        return {
            "id": self.id,
            "from": self.sender,
            "to": self.to,
            "kind": self.kind,
            "ts": self.ts,
            "path": self.rel,
            "text": self.text,
            "read": read,
        }


def compact(ts: str) -> str:
    """2026-12-01T05:58:07.245Z -> 20261201T055807245Z (a file name's time)."""
    return ts.replace("-", "").replace(":", "").replace(".", "")


def file_name(ts: str, sender: str, ident: str) -> str:
    return f"{compact(ts)}-{sender}-{ident}.md"


def parse_name(name: str) -> tuple[str, str, str] | None:
    """(compact ts, sender, id) of a message file's name; None if it is not one."""
    if not name.endswith(".md") or len(name) < 20 + 12 + 3 + 1:
        return None
    ts, ident, sender = name[:19], name[-13:-3], name[20:-14]
    if not (
        name[19] == "-"
        and name[-14] == "-"
        and ts[8] == "T"
        and ts[-1] == "Z"
        and (ts[:8] + ts[9:18]).isascii()
        and (ts[:8] + ts[9:18]).isdigit()
        and is_id(ident)
        and layout.is_actor(sender)
    ):
        return None
    return ts, sender, ident


def is_id(ident: str) -> bool:
    return len(ident) == 10 and ident[:2] == "M-" and set(ident[2:]) <= _HEX


def render(sender: str, to: str, kind: str, ts: str, ident: str, text: str) -> bytes:
    header = {"from": sender, "to": to, "kind": kind, "ts": ts, "id": ident, "sha256": wal.sha256(text.encode())}
    return ("".join(f"{k}: {header[k]}\n" for k in _HEADER) + "\n" + text).encode()


def parse(data: bytes, name: str, folder: str) -> tuple[dict[str, str], str] | str:
    """(header, text) of a message file, checked against its name, its folder and its hash; or why it is not one."""
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text"
    head, sep, text = raw.partition("\n\n")
    if not sep:
        return "no blank line after the header"
    fields: dict[str, str] = {}
    for line in head.split("\n"):
        key, colon, value = line.partition(": ")
        if not colon or key not in _HEADER or key in fields:
            return "a header line that is not one of from, to, kind, ts, id, sha256 (once each)"
        fields[key] = value
    if set(fields) != set(_HEADER):
        return "a header line is missing"
    named = parse_name(name)
    if named is None or (compact(fields["ts"]), fields["from"], fields["id"]) != named:
        return "its header does not match its file name"
    if fields["to"] != folder or fields["kind"] not in KINDS:
        return "its header names another recipient or an unknown kind"
    if wal.sha256(text.encode()) != fields["sha256"]:
        return "its text does not match its sha256 header"
    return fields, text


def folder_names(state: State, who: str, skipped: list[str]) -> list[str]:
    """The names in mail/<who>/ (one readdir); [] if it is absent. A folder that is not a real one is named in
    skipped and not looked into."""
    rel = f"{MAIL_DIR}/{who}"
    path = state.path(rel)
    st = fsio.lstat(path)
    if st is None:
        return []
    if not stat.S_ISDIR(st.st_mode):
        skipped.append(f"{state.rel(rel)}: not a real folder (a link or a file): not looked into")
        return []
    try:
        return sorted(os.listdir(path))
    except OSError as e:
        skipped.append(f"{state.rel(rel)}: cannot be listed ({e.strerror})")
        return []


def read_message(state: State, who: str, name: str) -> Message | str:
    """A message file read, never through a link, never blocking on a FIFO, at most MAX_BYTES; or why not."""
    rel = f"{MAIL_DIR}/{who}/{name}"
    try:
        data, size = fsio.read_small(state.path(rel), MAX_BYTES)
    except RehydrateError as e:
        return f"not a regular file ({e.message})"
    if data is None:
        return "gone"
    if size is not None and size > MAX_BYTES:
        return f"{size:,} bytes, more than the {MAX_BYTES:,} a message may hold"
    found = parse(data, name, who)
    if isinstance(found, str):
        return found
    return Message(found[0], found[1], state.rel(rel))


def send(state: State, to: str, kind: str, text: str) -> Outcome:
    """Create the message file (once), then record it in the sender's log."""
    if kind not in KINDS:
        raise UsageError(f"unknown kind {kind!r}", f"one of {', '.join(KINDS)}", field="kind")
    if not layout.is_actor(to):
        raise UsageError(f"{to!r} is not an actor's name", "letters, digits, `.`, `_` or `-`", field="to")
    if to == state.actor:
        raise UsageError("a message to yourself", "record it as a promise, a decision or a checkpoint instead")
    text = clean(text)
    if not text:
        raise UsageError("the message is empty", field="text")
    cap("the message", text, layout.MAX_FIELD)
    ts = wal.now()
    ident = "M-" + wal.sha256(f"{state.actor}\0{to}\0{ts}\0{kind}\0{text}".encode())[:8]
    rel = f"{MAIL_DIR}/{to}/{file_name(ts, state.actor, ident)}"
    if not state.joining and not fsio.check_regular(state.wal_path, WORDS):
        raise RehydrateError(f"no log at {state.wal_rel}", "run `rehydrate init --goal TEXT` to create the state")
    # a name of its own (time, sender, id): created without the lock, never over another file
    fsio.ensure_dir(state.path(MAIL_DIR), "mkdir.mail", WORDS)
    fsio.ensure_dir(state.path(f"{MAIL_DIR}/{to}"), "mkdir.mail", WORDS)
    fscreate.create_new(state.path(rel), render(state.actor, to, kind, ts, ident, text), "mail.create", WORDS)
    record = {"id": ident, "to": to, "kind": kind, "path": rel, "sha256": wal.sha256(text.encode())}
    return state.record("mail", record)


def mark_read(state: State, ids: list[str]) -> Outcome:
    """One `read` record naming the ids shown."""
    return state.record("read", {"mail": ids})
