"""Who vouches for a message: a message in the name of an actor who signs her records counts only when her log holds
a `mail` record of hers naming it, signed by her key; any other is forged (named, never shown, counted or marked read
as hers). A message in the name of an actor without a key is as good as the hands that pushed it."""

from __future__ import annotations

import os
import stat

from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import Problem, layout, records
from rehydrate.store.mail.messages import ALL, MAIL_DIR, Message, folder_names, parse_name, read_message
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.state import State


class Senders:
    """The keys of the actors who sign (store/keys/), looked up once: a message in a keyed actor's name counts only
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
            ):  # store/keys/ imported here, only where some actor signs (the hook path stays light)
                from rehydrate.store.keys import pins, sign

                self._keys = {a: k for a, k in sign.committed(self.state).items() if k is not None}
                self._keys.update(pins.pins(self.state))
        return self._keys.get(sender)

    def unvouched(self, m: Message) -> str | None:
        """Why a message in a keyed actor's name does not count, or None."""
        pub = self.key(m.sender)
        if pub is None:
            return None
        from rehydrate.store.keys import register, sign  # (a keyed sender: see key())

        rel = f"{MAIL_DIR}/{m.to}/{os.path.basename(m.rel)}"
        mark = f'"id":"{m.id}"'.encode()
        try:
            for where, offset, raw in register.back(self.state, m.sender):
                if b'"op":"mail"' not in raw or mark not in raw:
                    continue
                rec = walback.decode(raw, offset)
                data = rec["data"]
                if records.op_of(rec) is not records.MAIL or data.get("id") != m.id:
                    continue
                said = (data.get("path"), data.get("to"), data.get("kind"), data.get("sha256"))
                if said != (rel, m.to, m.kind, wal.sha256(m.text.encode())):
                    return f"the mail record {m.id} of {where} (seq {rec['seq']}) names another file, kind or text"
                if rec["h"] in self.verified(m.sender):
                    return None
                why = sign.verify(rec, pub)
                return None if why is None else f"its mail record in {where} (seq {rec['seq']}) is not: {why}"
        except (wal.BadRecord, RehydrateError, register.ArchiveGone):
            return f"{m.sender}'s log could not be read through (the state check names why)"
        return f"{m.sender}'s log holds no mail record {m.id}"

    def verified(self, sender: str) -> set[str]:
        """The records of sender's log this clone verified before (a cache: no signature checked twice)."""
        if self._verified is None:
            from rehydrate.store.keys import pins  # (a keyed sender: see key())

            self._verified = {a: {h for h, _ in pairs} for a, pairs in pins.verified_records(self.state).items()}
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
