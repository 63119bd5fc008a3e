"""transcripts.claude.tasks: how one of Claude Code's task tools' calls changes its task list."""

from __future__ import annotations

from rehydrate.transcripts.claude.tasks import fold_task


def test_a_task_made_without_an_id_after_a_delete_takes_a_new_one() -> None:
    tasks: dict[str, dict[str, object]] = {}
    for subject in ("a", "b", "c"):
        fold_task(tasks, "TaskCreate", {"subject": subject}, {})
    fold_task(tasks, "TaskUpdate", {"taskId": "2", "status": "deleted"}, {})
    fold_task(tasks, "TaskCreate", {"subject": "d"}, {})
    assert {k: v["subject"] for k, v in tasks.items()} == {"1": "a", "3": "c", "4": "d"}
