"""What a worktree keeps outside the repository, in its own git folder: where that is (place), the rollback caches
(seen, teamseen) and the rollback they find (rollback), what this process last wrote (memo) and the briefs it read
(journal). Never committed.
"""
