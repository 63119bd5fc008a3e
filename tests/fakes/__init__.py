"""Fakes for the recovery tests: programs put on a test's own PATH, so that no test reaches a network or the real
home (their signatures are frozen: the recovery tests build on them):

- `fakes.gh.install_fake_gh(bin_dir, *, auth=True, current=None, prs=None, hang=False) -> Path` writes bin_dir/gh, a
  `#!<sys.executable>` script that reads canned answers from bin_dir/gh.json and appends each argv to bin_dir/gh.calls.
  It answers `gh auth status` (exit 0, or 4 when not auth: gh's "authentication required") and `gh pr view [N] --json
  FIELDS`: `current` is the branch's pull request (None: exit 1 "no pull requests found for branch"), `prs` maps a
  number to its pull request (`{"number", "title", "state", "mergedAt", "url", "headRefName",
  "statusCheckRollup"}`). hang=True: it writes its pid to bin_dir/gh.pid and sleeps an hour (the test never sleeps).
- `fakes.gh.bin_path(tmp, gh=None) -> str`: a PATH of one new folder holding a `git` symlink to the real git and,
  when gh == "fake", the fake gh; so no real gh is reachable. Tests also drop GH_TOKEN and GITHUB_TOKEN.
- `fakes.gitrepos.remote_pair(tmp) -> (origin_bare, agent, teammate)`, `teammate_merge(pair, message)` (a commit
  pushed to main and fetched into the agent's clone), `rebase_head(agent)`, `switch(agent, branch)`.
"""
