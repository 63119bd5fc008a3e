"""What git says now, for the checks that compare it with the checkpoint (live-state, direction): probe.py starts
git once per run with bounded calls (through rehydrate.proc, never a shell) and gives a GitNow; files.py reads what
the repository's own files say without a process (HEAD, the main-line refs, FETCH_HEAD's time); config.py reads
user.email from git's config files; gh.py asks `gh` for the branch's pull request and CI, in `recover` only.
Nothing here is a check of the ledger: live-state and direction (checks/livestate.py, checks/direction.py) are.
"""
