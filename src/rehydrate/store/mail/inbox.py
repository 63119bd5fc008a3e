"""This actor's inbox: the messages to it and to all, unread first found by name (one readdir per folder), headers
read only for unread messages, at most MAX_READ of them (the hook path's bound), each vouched for by its sender's
signed log where she signs."""

from __future__ import annotations

from rehydrate.fs import write as fsio
from rehydrate.store.mail.messages import ALL, MAIL_DIR, Message, folder_names, parse_name, read_message
from rehydrate.store.mail.senders import Senders
from rehydrate.text import named

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.store.state import State

MAX_READ = 64  # headers read in one listing (the hook path's bound)


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
