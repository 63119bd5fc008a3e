"""store/git/plumb.py: which state files git merges by union, conflicted stages as git lists them, and the note a
sync leaves while a two-part step is half done."""

from __future__ import annotations

from pathlib import Path

from rehydrate.store.git import plumb


def test_the_union_merged_files_are_the_logs_and_the_append_only_views() -> None:
    for rel in ("10_invariants.md", "99_next.md", "wal/agent.jsonl", "next/tess.md", "handoff/tess.md"):
        assert plumb.union_able(rel), rel
    for rel in ("00_goal.md", "wal/agent.seen", "wal/sub/agent.jsonl", "keys/agent.pub", "archive/x.jsonl"):
        assert not plumb.union_able(rel), rel


def test_stages_are_read_by_path_until_the_first_empty_entry() -> None:
    text = (
        b"100644 aaa 1\twal/agent.jsonl\x00100644 bbb 2\twal/agent.jsonl\x00100644 ccc 3\twal/agent.jsonl\x00"
        b"bad entry\x00100644 ddd 2\t99_next.md\x00\x00100644 eee 2\tafter.md\x00"
    )
    assert plumb.parse_stages(text) == {
        "wal/agent.jsonl": {1: ("100644", "aaa"), 2: ("100644", "bbb"), 3: ("100644", "ccc")},
        "99_next.md": {2: ("100644", "ddd")},
    }


def test_the_pending_note_is_written_read_and_cleared(tmp_path: Path) -> None:
    folder = str(tmp_path / "local")
    assert plumb.read_pending(folder) is None
    plumb.write_pending(folder, "merge", "a" * 40, "b" * 40)
    assert plumb.read_pending(folder) == {"step": "merge", "old": "a" * 40, "new": "b" * 40}
    Path(plumb.pending_path(folder)).write_text('{"step": 1}')
    assert plumb.read_pending(folder) == {"step": "unreadable", "old": "", "new": ""}
    plumb.clear_pending(folder)
    plumb.clear_pending(folder)  # twice: nothing there is no error
    assert plumb.read_pending(folder) is None
