"""The redo step: bring the views up to a record (used both to write and to redo after a crash), and finish a
rotate that a crash interrupted between its append and the log's replacement."""

from __future__ import annotations

import os
import stat

from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem, actors, layout, records
from rehydrate.store.layout import GOAL, HANDOFF, INVARIANTS, NEXT
from rehydrate.store.local.seen import fingerprint
from rehydrate.store.views import render_goal, render_next_record, render_record
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record


def check_archive(state: State, rec: Record, line: int | None) -> None:
    """A rotate record's archive must be a plain file in this state folder's archive/, a real folder: the
    record may have come with a `git pull`, and finishing it writes there. Raises, naming the record."""
    from rehydrate.store.wal import scan as walscan  # a rotate's alone (tests/cli/test_cli_imports.py)

    why = walscan.archive_error(rec)
    folder = state.path(layout.ARCHIVE_DIR)
    st = fsio.lstat(folder)
    if why is None and st is not None:
        inside = os.path.join(os.path.realpath(state.root), layout.ARCHIVE_DIR)
        if not stat.S_ISDIR(st.st_mode) or os.path.realpath(folder) != inside:
            why = f"{state.rel(layout.ARCHIVE_DIR)} is not a real folder inside the state folder"
    if why is not None:
        where = f"{state.wal_rel} line {line}" if line else state.wal_rel
        raise RehydrateError(
            f"{where}: refusing record {rec.get('seq')} (rotate): {why} [unsafe-path]; nothing was written",
            "a rotate record names its archive as archive/<file>.jsonl; this one was not written by rehydrate "
            "(or archive/ was replaced): restore the WAL from git or move it away, and check who committed it",
        )


def finish_rotate(state: State, snap: Snapshot, last_offset: int, repair: bool) -> None:
    """My head a rotate record that is not the log's first line, and the only head: a rotate was interrupted
    between its append and the log's replacement. Finished (with repair), else named."""
    last = snap.last
    if records.op_of(last) is records.ROTATE and last_offset > 0 and len(snap.heads) == 1:
        check_archive(state, last, wallines.line_number(state.wal_path, last_offset))
        if repair:
            apply(state, last)
            snap.repaired.append(f"finished an interrupted rotate ({last['data'].get('archive')})")
            snap.prev = None
        else:
            snap.problems.append(Problem("interrupted-rotate", state.wal_rel, None, "a rotate was interrupted", True))


def apply(state: State, rec: Record) -> list[str]:
    """Bring the views up to a record. Idempotent: used both to write and to redo after a crash."""
    session = state.session
    session.wrote = {}
    try:
        done = _apply_record(state, rec)
        if session.pending is not None:  # the command's cache: each view written, from the descriptor written
            session.pending.wrote(rec, session.wrote)
        return done
    except (KeyError, TypeError, AttributeError) as e:  # a record with a valid hash but not our shape
        raise RehydrateError(
            f"record {rec.get('seq')} ({rec.get('op')}) of {state.rel(layout.WAL_DIR)}/ lacks what its op needs ({e})",
            "it was not written by this version of rehydrate; restore the WAL from git or move it away",
        ) from None


def _apply_record(state: State, rec: Record) -> list[str]:
    session = state.session
    op = records.op_of(rec)
    data = rec["data"]
    if op is records.INIT:
        done = []
        for name, text in (
            (INVARIANTS, data["header"]),
            (NEXT, render_next_record(rec)),
            (GOAL, render_goal(data["goal"], data.get("done_when"))),
            (layout.GITIGNORE, layout.GITIGNORE_TEXT),
            (layout.GITATTRIBUTES, layout.GITATTRIBUTES_TEXT),
        ):
            if not fsio.check_regular(state.path(name), WORDS):
                session.wrote[name] = fsio.replace(state.path(name), text.encode(), "view.replace", words=WORDS)
                done.append(name)
        return done
    if op.appends:
        from rehydrate.store.latches import (
            latch as latches,  # not on the hook path: checkpoints and resumes do not bind lines
        )

        return [INVARIANTS] if latches.append_line(state, data["line"], redo=False) else []
    if op.moves in (NEXT, HANDOFF, layout.TASKS):  # a replaceable view (the init's was written above)
        name = op.moves
        if name not in rec["views"]:  # an actor that joined: its own program counter (store/actors.py)
            name = actors.pc_names(state.actor, rec)[0] if op is records.MERGE else actors.record_view(state.actor, rec)
            actors.ensure_folder(state, name)
        rendered, session.rendered = session.rendered, None
        # the bytes State.seal just rendered for this very record, else rendered here
        raw = rendered[1] if rendered is not None and rendered[0] is rec else render_record(rec).encode()
        st = session.wrote[name] = fsio.replace(state.path(name), raw, "view.replace", words=WORDS)
        state.memo.wrote_view(name, st, raw)
        return [name]
    if op is records.ROTATE:
        check_archive(state, rec, None)
        fsio.ensure_dir(state.path(layout.ARCHIVE_DIR), "mkdir.archive", WORDS)
        check_archive(state, rec, None)  # the folder as it is now that it exists
        fsio.link(state.wal_path, state.path(data["archive"]), "rotate.link", WORDS)
        log = fsio.replace(state.wal_path, wal.encode(rec), "rotate.replace", words=WORDS)
        if session.pending is not None:  # the log was replaced by one holding the rotate record
            session.pending.fp, session.pending.at = fingerprint(log), 0
        return [data["archive"]]
    return []
