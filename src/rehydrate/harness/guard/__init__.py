"""The guard: a rejected approach stays rejected. What each one watches (watches.py); the check before a tool runs
(before.py, with shellwrites.py reading what a shell command writes); the check by effect after it (effect.py,
comparing the guarded files with their snapshot, snapshot.py)."""
