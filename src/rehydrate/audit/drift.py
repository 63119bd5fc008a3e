"""Format drift: the record types, subtypes and tool names that rehydrate's transcript readers do not know, by harness
and harness version, so that the next change of a harness's format shows up as a count, not as facts silently missed.

Counted by the tail reader itself (transcripts.recent.read_since's `unknown`, under the version its `version` names)
in every window the audit reads with it (loss.py): each compaction's window (at most 16 MiB before it, since the
previous one), and each session's end after its last compaction, at most its last MiB (loss.DRIFT_TAIL: a new record
type or tool comes back in every turn that uses it, so the last MiB of a session shows it without a second read of
every file). Names as the reader gives them: `type:NAME` (a record type; Codex `type:event_msg:NAME`,
`type:response_item:NAME`), `subtype:system:NAME` (Claude Code), `tool:NAME` (MCP tools are the user's own and never
counted).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.audit.loss import Window


def counted(windows: list[Window]) -> dict[str, int]:
    """What a session's windows did not know, summed, the most frequent first."""
    total: dict[str, int] = {}
    for w in windows:
        for name, n in w.unknown.items():
            total[name] = total.get(name, 0) + n
    return _ranked(total)


def tally(sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """By harness and version (in that order, versions numerically), the sessions read and what they did not know:
    [{"harness", "version", "sessions", "unknown": {name: count}}]. A session counts under the version its records
    name last (one that spans an upgrade, under the newer)."""
    found: dict[tuple[str, str | None], dict[str, Any]] = {}
    for s in sessions:
        if "unknown" not in s:  # not read for it (an error, or the loss report off)
            continue
        entry = found.setdefault((s["harness"], s["version"]), {"sessions": 0, "unknown": {}})
        entry["sessions"] += 1
        for name, n in s["unknown"].items():
            entry["unknown"][name] = entry["unknown"].get(name, 0) + n
    ordered = sorted(found.items(), key=lambda kv: (kv[0][0], _version_key(kv[0][1])))
    return [
        {"harness": harness, "version": version, "sessions": e["sessions"], "unknown": _ranked(e["unknown"])}
        for (harness, version), e in ordered
    ]


def line(entry: dict[str, Any], show: Any, most: int = 8) -> str:
    """One version's drift as a line: "codex 0.171.0 (1 session): type:world_state 2, type:token_usage_record 4"."""
    names = list(entry["unknown"].items())
    listed = ", ".join(f"{show(name)} {n}" for name, n in names[:most])
    more = f", and {len(names) - most} more" if len(names) > most else ""
    sessions = f"{entry['sessions']} session{'s' if entry['sessions'] != 1 else ''}"
    return f"{show(entry['harness'])} {show(entry['version'] or 'version unknown')} ({sessions}): {listed}{more}"


def _ranked(counts: dict[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _version_key(version: str | None) -> tuple[int, tuple[tuple[int, int, str], ...]]:
    """Versions in their numeric order (2.1.5 before 2.1.12), an unknown one last."""
    if version is None:
        return (1, ())
    parts = version.replace("-", ".").split(".")
    return (0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts))
