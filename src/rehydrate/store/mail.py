"""Mail and promises between the actors of one state folder.

A message is a file of its own, created once and never appended to: `state/mail/<to>/<ts>-<from>-<id>.md` (ts as
YYYYmmddTHHMMSSmmmZ, id `M-` and 8 hex), holding the header lines `from:`, `to:`, `kind:`, `ts:`, `id:`, `sha256:` (of
the text), a blank line and the text. `--to all` writes under `mail/all/`. The sender's log gets a `mail` record (the
proof of sending); reading appends one `read` record naming the ids to the reader's log: a message is unread until a
`read` record of the reader's log names it. Promises are `promise` records of the promiser's log.

Everything under state/mail/ arrived by git pull: a folder or file that is a symlink, a FIFO, too large or
malformed is named and skipped, never followed; the text is untrusted (the brief fences it). A message in the name of
an actor who signs her records counts only when her log holds a `mail` record of hers naming it, signed by her key
(Senders); any other is forged: named, never shown, counted or marked read as hers. On the hook path:
standard library only, one readdir per folder, headers read only for unread messages, at most MAX_READ of them.
"""

from __future__ import annotations

import os
import stat

from rehydrate.errors import RehydrateError, UsageError
from rehydrate.fs import create as fscreate
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem, layout
from rehydrate.store.wal import record as wal
from rehydrate.text import cap, clean, named

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.session import Outcome
    from rehydrate.store.state import State

MAIL_DIR = layout.MAIL_DIR
ALL = "all"
KINDS = ("redirect", "blocker", "actionable", "fyi")  # the order messages are shown in
URGENT = ("redirect", "blocker")  # an unread one degrades the mailbox check
MAX_READ = 64  # headers read in one listing (the hook path's bound)
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


class Listing:
    """What a look at mail/<me>/ and mail/all/ found: the messages read (sorted), the files skipped (each named with
    why), how many unread files were not read (past MAX_READ)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.skipped: list[str] = []
        self.unread_names = 0  # unread by name, before any header was read
        self.not_read = 0
        self.any_mail = False
        self.forged: list[tuple[Message, str]] = []  # from a keyed actor, not vouched for by her signed log: why


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


def listing(state: State, read: set[str], *, everything: bool = False, limit: int = MAX_READ) -> Listing:
    """The messages to this actor and to all (not its own to all): the unread ones (every one with everything),
    sorted by kind, then time. Only unread names are read (at most limit files)."""
    out = Listing()
    wanted: list[tuple[str, str, str]] = []  # (compact ts, folder, name)
    for who in dict.fromkeys((state.actor, ALL)):  # (an actor named `all` reads that folder once)
        for name in folder_names(state, who, out.skipped):
            if fsio.is_temp_name(name):
                continue
            parsed = parse_name(name)
            if parsed is None:
                # a file name from git (untrusted): named, so that it cannot pass for the words after it
                out.skipped.append(f"{named(state.rel(MAIL_DIR, who, name), 200)}: not a message file's name")
                continue
            if who == ALL and parsed[1] == state.actor:
                continue
            out.any_mail = True
            if parsed[2] not in read:
                out.unread_names += 1
            elif not everything:
                continue
            wanted.append((parsed[0], who, name))
    wanted.sort()
    if len(wanted) > limit:
        out.not_read = len(wanted) - limit
        wanted = wanted[len(wanted) - limit :]  # the newest
    senders = Senders(state)
    for _, who, name in wanted:
        found = read_message(state, who, name)
        if isinstance(found, str):
            out.skipped.append(f"{named(state.rel(MAIL_DIR, who, name), 200)}: {found}: skipped")
            continue
        why = senders.unvouched(found)
        if why is not None:
            out.forged.append((found, why))
        else:
            out.messages.append(found)
    out.messages.sort(key=Message.order)
    return out


# --- who vouches for a message ----------------------------------------------------------------------------------


class Senders:
    """The keys of the actors who sign (store/keys.py), looked up once: a message in a keyed actor's name counts only
    when her log holds a `mail` record naming it (its id, file, recipient, kind and the sha256 of its text) signed by
    her key. Anyone who can push can write a file under state/mail/ in her name; no one without her key can sign
    that record. A message in the name of an actor without a key is as good as the hands that pushed it."""

    def __init__(self, state: State) -> None:
        self.state = state
        self._keys: dict[str, Any] | None = None
        self._verified: dict[str, set[str]] | None = None

    def key(self, sender: str) -> Any:
        """The key sender's records are checked with in this clone (pinned, else committed), or None."""
        if self._keys is None:
            self._keys = {}
            if (
                fsio.lstat(self.state.path(layout.KEYS_DIR)) is not None
                or fsio.lstat(os.path.join(self.state.local, layout.KEY_PINS)) is not None
            ):  # (store/keys.py is loaded only where some actor signs)
                from rehydrate.store import keys

                self._keys = {a: k for a, k in keys.committed(self.state).items() if k is not None}
                self._keys.update(keys.pins(self.state))
        return self._keys.get(sender)

    def unvouched(self, m: Message) -> str | None:
        """Why a message in a keyed actor's name does not count, or None."""
        pub = self.key(m.sender)
        if pub is None:
            return None
        from rehydrate.store import keys
        from rehydrate.store.wal import back as walback

        rel = f"{MAIL_DIR}/{m.to}/{os.path.basename(m.rel)}"
        mark = f'"id":"{m.id}"'.encode()
        try:
            for where, offset, raw in keys.back(self.state, m.sender):
                if b'"op":"mail"' not in raw or mark not in raw:
                    continue
                rec = walback.decode(raw, offset)
                data = rec["data"]
                if rec["op"] != "mail" or data.get("id") != m.id:
                    continue
                said = (data.get("path"), data.get("to"), data.get("kind"), data.get("sha256"))
                if said != (rel, m.to, m.kind, wal.sha256(m.text.encode())):
                    return f"the mail record {m.id} of {where} (seq {rec['seq']}) names another file, kind or text"
                if rec["h"] in self.verified(m.sender):
                    return None
                why = keys.verify(rec, pub)
                return None if why is None else f"its mail record in {where} (seq {rec['seq']}) is not: {why}"
        except (wal.BadRecord, RehydrateError, keys.ArchiveGone):
            return f"{m.sender}'s log could not be read through (the state check names why)"
        return f"{m.sender}'s log holds no mail record {m.id}"

    def verified(self, sender: str) -> set[str]:
        """The records of sender's log this clone verified before (a cache: no signature checked twice)."""
        if self._verified is None:
            from rehydrate.store import keys

            self._verified = {a: {h for h, _ in pairs} for a, pairs in keys.verified_records(self.state).items()}
        return self._verified.get(sender, set())


def forged(state: State) -> list[Problem]:
    """Every message under state/mail/ in a keyed actor's name that her signed log does not vouch for (verify)."""
    senders, out = Senders(state), []
    skipped: list[str] = []
    st = fsio.lstat(state.path(MAIL_DIR))
    try:
        folders = sorted(os.listdir(state.path(MAIL_DIR))) if st is not None and stat.S_ISDIR(st.st_mode) else []
    except OSError:
        folders = []  # the mailbox check names a folder that cannot be listed
    for who in folders:
        if who != ALL and not layout.is_actor(who):
            continue
        for name in folder_names(state, who, skipped):
            named = parse_name(name)
            if named is None or senders.key(named[1]) is None:
                continue
            found = read_message(state, who, name)
            why = senders.unvouched(found) if not isinstance(found, str) else None
            if isinstance(found, Message) and why is not None:
                out.append(Problem("forged", found.rel, None, forged_text(found, why)))
    return out


def forged_text(m: Message, why: str) -> str:
    """What is said of a forged message (after its file's name)."""
    return (
        f"a {m.kind} ({m.id}) in {m.sender}'s name that {m.sender}'s signed log does not vouch for ({why}): not "
        f"shown as {m.sender}'s, nor counted. Whoever committed it (git log -- {m.rel}) wrote it in {m.sender}'s name"
    )


# --- what this actor's log says ---------------------------------------------------------------------------------


class Known:
    """What this actor's log says of mail and promises: the ids its `read` records name, its promises by id, in the
    order made ({"text", "ts", "done"})."""

    def __init__(self) -> None:
        self.read: set[str] = set()
        self.promises: dict[str, dict[str, Any]] = {}

    def add(self, rec: dict[str, Any]) -> None:
        data = rec["data"]
        if rec["op"] == "rotate":  # the log before it archived: what it knew of mail and promises, carried
            self.read, self.promises = set(), {}
            carried = data.get("mail")
            if isinstance(carried, dict):
                read, promised = carried.get("read"), carried.get("promises")
                if isinstance(read, list):
                    self.read.update(i for i in read if isinstance(i, str))
                if isinstance(promised, dict):
                    self.promises.update(
                        (k, {"text": v["text"], "ts": v.get("ts"), "done": False})
                        for k, v in promised.items()
                        if isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("text"), str)
                    )
            return
        if rec["op"] == "read":
            names = data.get("mail")
            if isinstance(names, list):
                self.read.update(i for i in names if isinstance(i, str))
            return
        ident = data.get("id")
        if not isinstance(ident, str):
            return
        if data.get("done") is True:
            if ident in self.promises:
                self.promises[ident]["done"] = True
        elif isinstance(data.get("text"), str) and ident not in self.promises:
            self.promises[ident] = {"text": data["text"], "ts": rec.get("ts"), "done": False}


_MARKS = (b'"op":"read"', b'"op":"promise"', b'"op":"rotate"')
_MARK = 32  # bytes before the cached end that must still be there for the cache to hold


def known(state: State) -> Known:
    """This actor's read set and promises: from a per-worktree cache (store/local/place.py) and the part of the log
    after what it covered, or the whole log when the log was replaced, cut or changed before that point. Only the lines
    that name a read or promise op are decoded; a line that does not decode is left out (`rehydrate verify` names
    it)."""
    found = Known()
    opened = fsio.open_stat(state.wal_path, WORDS) if fsio.lstat(state.wal_path) is not None else None
    if opened is None:
        return found
    fd, st = opened
    try:
        cache_path, start = _load(state, st, fd, found)
        data = os.pread(fd, st.st_size - start, start)
    finally:
        os.close(fd)
    end = data.rfind(b"\n") + 1
    for line in data[:end].split(b"\n"):
        if any(m in line for m in _MARKS):
            try:
                rec = wal.decode(line)
            except wal.BadRecord:
                continue
            if rec["op"] in ("read", "promise", "rotate") and isinstance(rec.get("data"), dict):
                found.add(rec)
    if cache_path is not None and end > 0:
        _save(cache_path, st, start + end, data[:end][-_MARK:] if end >= _MARK else None, found)
    return found


def _cache_path(state: State) -> str | None:
    try:
        from rehydrate.store.local import place as local

        folder = local.local_dir(state.root)
        for path in (os.path.dirname(folder), folder):  # not state: created without a sync
            fsio.ensure_dir(path, None, WORDS)
        return os.path.join(folder, f"mail.{state.actor}.json")
    except (OSError, ValueError, RehydrateError):
        return None


def _load(state: State, st: os.stat_result, fd: int, found: Known) -> tuple[str | None, int]:
    """(the cache's path, the offset the scan starts from), found filled from the cache when it holds."""
    from rehydrate import safejson

    path = _cache_path(state)
    if path is None:
        return None, 0
    try:
        raw, _ = fsio.read_small(path, 16 << 20)
        cache = safejson.loads(raw) if raw else None
        if not isinstance(cache, dict):
            return path, 0
        body = cache.get("body")
        if not isinstance(body, dict) or wal.sha256(safejson.dumps_canonical(body)) != cache.get("sum"):
            return path, 0
        size, mark = body["size"], body["mark"]
        if body["ino"] != st.st_ino or not 0 < size <= st.st_size or not isinstance(mark, str):
            return path, 0
        if os.pread(fd, _MARK, size - _MARK).hex() != mark:
            return path, 0
        found.read = set(body["read"])
        found.promises = dict(body["promises"])
        return path, size
    except Exception:  # a cache that is not ours: the whole log is read
        found.read, found.promises = set(), {}
        return path, 0


def _save(path: str, st: os.stat_result, size: int, mark: bytes | None, found: Known) -> None:
    from rehydrate import safejson

    if mark is None:
        return
    body = {
        "ino": st.st_ino,
        "size": size,
        "mark": mark.hex(),
        "read": sorted(found.read),
        "promises": found.promises,
    }
    text = safejson.dumps_canonical({"body": body, "sum": wal.sha256(safejson.dumps_canonical(body))})
    fsio.write_hint(path, text)


def carried(state: State) -> dict[str, Any]:
    """What a rotate record carries of this actor's mail and promises: the ids read, the promises still open."""
    found = known(state)
    open_ = {k: {"text": v["text"], "ts": v.get("ts")} for k, v in found.promises.items() if not v.get("done")}
    return {"read": sorted(found.read), "promises": open_}


def read_set(state: State) -> set[str]:
    """The ids this actor's `read` records name."""
    return known(state).read


def promises(state: State) -> dict[str, dict[str, Any]]:
    """This actor's promises by id, in the order made: {"text", "ts", "done"}."""
    return known(state).promises


# --- the writes -------------------------------------------------------------------------------------------------


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


def promise(state: State, text: str) -> Outcome:
    text = clean(text)
    if not text:
        raise UsageError("the promise is empty", field="text")
    cap("the promise", text, layout.MAX_FIELD)
    ident = "P-" + wal.sha256(f"{state.actor}\0{wal.now()}\0{text}".encode())[:6]
    return state.record("promise", {"id": ident, "text": text})


def promise_done(state: State, ident: str) -> Outcome:
    made = promises(state)
    if ident not in made:
        known = ", ".join(i for i, p in made.items() if not p["done"]) or "none open"
        raise UsageError(f"no promise {ident!r} of {state.actor}", f"open ones: {known}", field="id")
    if made[ident]["done"]:
        raise UsageError(f"promise {ident} is already done", field="id")
    return state.record("promise", {"id": ident, "done": True})
