"""The refusal cache (keys.refused, in this clone's git folder): a key first sight refused to pin, and why, kept
while what the refusal rests on is as it was. A refused key is not pinned, so without it every command would walk the
actor's log again."""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.fs import write as fsio
from rehydrate.store import Problem
from rehydrate.store.keys import pins, register, sign
from rehydrate.store.local import place as local

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.store.state import State


REFUSED = "keys.refused"  # the keys this clone refused to pin, and why, while nothing they rest on changed (a cache)


def first_sight_once(state: State, actor: str, filed: sign.Public) -> Problem | None:
    """first_sight, its refusal remembered (keys.refused, a cache) while what it rests on is as it was: the key, the
    actor's log, wal/ (the state's starts: git creates a file anew when it changes one) and this user's key file. A
    refused key is not pinned, so without this every command would walk the actor's log again."""
    path, depends = os.path.join(state.local, REFUSED), _depends(state, actor, filed)
    cache = pins.read_json(path)
    entry = cache.get(actor)
    if isinstance(entry, list) and len(entry) == 4 and entry[0] == depends and all(isinstance(x, str) for x in entry):
        return Problem(entry[1], entry[2], None, entry[3])
    problem = register.first_sight(state, actor, filed)
    if problem is None and actor not in cache:
        return None
    if problem is None:
        del cache[actor]
    else:
        cache[actor] = [depends, problem.code, problem.file, problem.message]
    local.ensure(os.path.dirname(path))
    fsio.write_hint(path, safejson.dumps_canonical(cache) + b"\n")
    return problem


def _depends(state: State, actor: str, filed: sign.Public) -> str:
    parts = [filed.id]
    for path in (state.log_path(actor), state.wal_dir, sign.key_file()):
        st = fsio.lstat(path)
        parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}" if st is not None else "-")
    return "|".join(parts)
