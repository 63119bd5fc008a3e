"""The git probe live-state and direction share: git now, asked once per run, with bounded calls.

Contract:
- `probe(context) -> Probe` first reads what the repository's own files say (checks/git/files.py: HEAD's hash, the
  main-line refs, FETCH_HEAD's time; a few small reads, no process), then starts round 1 at once, in parallel,
  through `rehydrate.proc.start` (never subprocess, never a shell): `git status --porcelain=v2 --branch -z` (the
  argv of store/git/info.py; upstream and ahead/behind read by `gitinfo.parse_upstream`); `git log -z --boundary
  [--name-only --find-renames -l1000] --format=%H%x1f%P%x1f%an%x1f%ae%x1f%cI%x1f%s --max-count=51 <checkpoint
  HEAD>..<HEAD>` when the checkpoint recorded a HEAD that the files do not show as HEAD now, up to the hash the files
  show (asked again up to HEAD if git status then names another). The log of a range of two commits does not change
  unless the history under it does (a replace ref, a deepened shallow clone: rare; the next commit asks again): its
  answer is kept in the state's local folder (KEPT, a cache stamped with the hash of its arguments and bytes,
  store/local/place.py), and the next probe of the same range starts no log; `git for-each-ref` on origin/HEAD,
  origin/main, origin/master, main, master when the files could not be read (reftable, a huge packed-refs). In the
  common case (nothing committed since, or nothing since the last session start) that is one process. It returns
  without waiting. A git status started earlier (`status_started`, which a session start runs before it
  reads the state: it needs nothing the state says) is taken from context.shared instead of starting another.
  Each call has its deadline (HOOK_DEADLINE, 2 s, in hook scope; RECOVER_DEADLINE, 10 s, in recover; an early git
  status's counts from when the probe takes it) and runs with `context.env`.
- `Probe.result() -> GitNow` waits for round 1, then runs round 2 only when needed (`merge-base --is-ancestor`,
  `reflog -n 20 -z --format=%gs HEAD`), and returns the same GitNow on every later call. It never raises for git's
  sake: a call that failed or timed out is named in `GitNow.unanswered`.
- Nothing walks the whole history: every log has --max-count, and --is-ancestor stops at the checkpoint.
- Everything git prints is untrusted text (names, subjects): GitNow holds it raw; the checks clean it.
"""

from __future__ import annotations

import os

from rehydrate import proc
from rehydrate.checks.git.files import MAIN_REFS, files, is_hash, origin_main
from rehydrate.errors import RehydrateError
from rehydrate.fs import read as fsread
from rehydrate.fs import write as fsio
from rehydrate.store.git import info as gitinfo
from rehydrate.store.local import place
from rehydrate.store.wal.digest import sha256
from rehydrate.text import quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from rehydrate.checks import Context
    from rehydrate.checks.git.files import Files

HOOK_DEADLINE = 2.0  # seconds for each git call in hook scope
RECOVER_DEADLINE = 10.0  # in recover scope
MAX_COMMITS = 50  # commits since the checkpoint counted (one more asked, to know there are more)
LOG_FORMAT = "--format=%m%H%x1f%P%x1f%an%x1f%ae%x1f%cI%x1f%s"  # %m: "-" marks a boundary commit
MAX_LISTED = 20  # direction's commits on the main line asked for (one more, to know there are more)
DIRECTION_FORMAT = "--format=%H%x1f%an%x1f%ae%x1f%s"
STATUS = ["status", "--porcelain=v2", "--branch", "-z", "--", ":/", ":(exclude)."]  # the work tree but the state
STATUS_KEY = "git status"  # context.shared: a git status started before the probe (status_started)
KEPT = "gitlog"  # in the state's local folder (store/local/place.py): the last log since the checkpoint (_kept)
MAX_KEPT = 256 << 10  # the most of a log's answer kept


class Commit:
    """One commit of a `git log`: full hash, parents' hashes, author name and email, ISO date, subject; files: the
    paths it changed outside the state folder (None: not asked, or no answer)."""

    __slots__ = ("author", "date", "email", "files", "parents", "sha", "subject")

    def __init__(self, sha: str, parents: list[str], author: str, email: str, date: str, subject: str) -> None:
        self.sha = sha
        self.parents = parents
        self.author = author
        self.email = email
        self.date = date
        self.subject = subject
        self.files: list[str] | None = None


class GitNow:
    """What git said. repo: whether `git status` found a work tree (None: it did not answer). head: HEAD's full hash
    (None: unborn, or no answer). branch: None when detached. dirty: paths changed now, state/ left out (at most
    gitinfo.MAX_DIRTY; dirty_count the true number). upstream, ahead, behind: None without an upstream. commits: the
    commits in <checkpoint HEAD>..HEAD, newest first, at most MAX_COMMITS (`more`: whether there were more).
    descendant: whether the checkpoint's HEAD is an ancestor of HEAD (None: unknown, or no HEAD at the checkpoint).
    known: whether the checkpoint's commit exists here. reflog: HEAD's last reflog subjects, newest first (asked only
    when HEAD was rewritten or the branch changed). refs: refname -> hash (or `ref: target` for a symbolic ref) of
    the main-line candidates present. fetched: FETCH_HEAD's time as UTC ISO, None if never fetched. unanswered: git
    subcommand -> why it gave no answer ("did not answer within 2 s", "exit 128: ...")."""

    def __init__(self) -> None:
        self.repo: bool | None = None
        self.head: str | None = None
        self.branch: str | None = None
        self.dirty: list[str] = []
        self.dirty_count = 0
        self.upstream: str | None = None
        self.ahead: int | None = None
        self.behind: int | None = None
        self.commits: list[Commit] = []
        self.more = False
        self.descendant: bool | None = None
        self.known: bool | None = None
        self.reflog: list[str] = []
        self.refs: dict[str, str] = {}
        self.fetched: str | None = None
        self.unanswered: dict[str, str] = {}


class Probe:
    """The running git calls of one probe; `result()` waits for them (see the module's docstring)."""

    def __init__(
        self,
        root: str | None,
        env: dict[str, str],
        deadline: float,
        ckpt: dict[str, Any] | None,
        status: proc.Batch | None = None,
    ) -> None:
        self._root = root
        self._status = status  # git status started before the probe (status_started), or None: started here
        self._env = env
        self._deadline = deadline
        self._ckpt_head = recorded_head(ckpt.get("head")) if ckpt else None
        self._ckpt_branch = ckpt.get("branch") if ckpt else None
        self._names: list[str] = []
        self._batch: proc.Batch | None = None
        self._now: GitNow | None = None
        self._files: Files | None = None
        self._same: str | None = None  # HEAD as the files show it, when it is the checkpoint's: no log asked
        self._early: tuple[str, dict[str, proc.Result]] | None = None  # direction's main line and its answers
        self._inside: Callable[[str], bool] | None = None  # whether a path git names is in the state folder
        self._pinned: str | None = None  # HEAD as the files show it, which the log since the checkpoint stops at
        self._kept: proc.Result | None = None  # that log's answer as an earlier probe kept it (_kept)
        self._kept_at: str | None = None  # where it is kept: in the state's local folder
        if root is None:
            return
        self._files = files(root)
        self._inside = _inside(root, self._files.top) if self._files is not None else None
        calls = {} if status is not None else {"status": STATUS}
        if self._files is None or self._files.refs is None:
            calls["for-each-ref"] = ["for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)", *MAIN_REFS]
        head = self._files.head if self._files is not None else None
        if self._ckpt_head is not None and head is not None and head.startswith(self._ckpt_head):
            self._same = head
        elif self._ckpt_head is not None:
            if head is not None and is_hash(head):  # a range of two commits: its log is the same for ever
                self._pinned = head
                self._kept_at = os.path.join(place.local_dir(root), KEPT)
                self._kept = _kept(self._kept_at, self._log(head))
            if self._kept is None:
                calls["log"] = self._log(self._pinned or "HEAD")
        main = origin_main(self._files.refs) if self._files is not None and self._files.refs else None
        if main is not None and self._ckpt_head is not None:  # direction's calls, in this round rather than after it
            assert self._files is not None
            self._early = (main, {})
            early = direction_calls(main, self._ckpt_head)
            from rehydrate.checks.git import config as gitconfig  # a repository without origin's main never needs it

            email = gitconfig.user_email(self._files.common, self._files.gitdir, env)
            if email is not gitconfig.UNKNOWN:  # from the config files: no process for it
                del early["config"]
                said = (0, f"{email}\n".encode()) if isinstance(email, str) else (1, b"")
                self._early[1]["config"] = proc.Result(said[0], said[1], b"")
            calls.update({"dir-" + k: v for k, v in early.items()})
        self._names = list(calls)
        self._batch = proc.start([self.argv(*args) for args in calls.values()], env=env)

    def early(self, main: str) -> dict[str, proc.Result] | None:
        """direction's answers ("log", "config") when round 1 asked them for this main line, else None."""
        self.result()
        if self._early is None or self._early[0] != main or not self._early[1]:
            return None
        return self._early[1]

    def _log(self, until: str = "HEAD") -> list[str]:
        """The commits since the checkpoint up to until, with the files each changed (--name-only; a rename by its
        new name, as git status and so the checkpoint name it, with git's default rename detection whatever git's
        config says) when the state folder's place in the work tree is known, to tell the commits of state/ alone
        (else each commit's files stay unknown: news)."""
        return [
            "log",
            "-z",
            "--boundary",
            *(["--name-only", "--find-renames", "-l1000"] if self._inside is not None else []),
            LOG_FORMAT,
            f"--max-count={MAX_COMMITS + 1}",
            f"{self._ckpt_head}..{until}",
            "--",
        ]

    def argv(self, *args: str) -> list[str]:
        """A git command line in the state's repository (git -C <state folder> ...)."""
        return ["git", "-C", self._root or ".", *args]

    def run(self, calls: dict[str, list[str]]) -> dict[str, proc.Result]:
        """Runs more git calls at once (round 2, direction's log), under the probe's deadline; name -> Result."""
        results = proc.start([self.argv(*args) for args in calls.values()], env=self._env).wait(self._deadline)
        return dict(zip(calls, results, strict=True))

    def why(self, result: proc.Result) -> str | None:
        """Why a call gave no answer ("did not answer within 2 s", "git is not installed", "exit 128: ..."), or
        None when it answered (exit 0)."""
        if result.timed_out:
            return f"did not answer within {self._deadline:g} s"
        if result.missing:
            return "git is not installed"
        if result.code != 0:
            first = result.err.decode("utf-8", "replace").strip().split("\n")[0].strip()
            # git's words may name what the repository holds (a ref, a path): quoted, never the ledger's own
            return f"exit {result.code}: {quoted(first, 200)}" if first else f"exit {result.code}"
        return None

    def stop(self) -> None:
        """Stops what this probe started and nobody waited for (proc.Batch.stop): for a run that ends before the
        checks collect it (one raised). Nothing after result()."""
        for batch in (self._batch, self._status):
            if batch is not None:
                batch.stop()

    def result(self) -> GitNow:
        """What git said (see the module's docstring); waits for round 1, runs round 2 when needed, once."""
        if self._now is None:
            self._now = GitNow()
            if self._batch is not None:
                results = dict(zip(self._names, self._batch.wait(self._deadline), strict=True))
                if self._kept is not None:
                    results["log"] = self._kept
                elif self._kept_at is not None and "log" in results and self.why(results["log"]) is None:
                    _keep(self._kept_at, self._log(self._pinned or "HEAD"), results["log"].out)
                if self._status is not None:
                    results["status"] = self._status.wait(self._deadline)[0]
                if self._early is not None:
                    self._early[1].update({k[4:]: v for k, v in results.items() if k.startswith("dir-")})
                self._read(self._now, results)
        return self._now

    def _read(self, now: GitNow, results: dict[str, proc.Result]) -> None:
        status = results["status"]
        why = self.why(status)
        if why is not None:
            if status.code is not None and not status.missing:
                now.repo = False  # git answered: not a work tree
            else:
                now.unanswered["status"] = why
            return
        now.repo = True
        found = gitinfo.parse(status.out)
        now.head, now.branch = found["head"], found["branch"]
        now.dirty, now.dirty_count = found["dirty"], found.get("dirty_count", len(found["dirty"]))
        up = gitinfo.parse_upstream(status.out)
        now.upstream, now.ahead, now.behind = up["upstream"], up["ahead"], up["behind"]
        if "for-each-ref" in results:
            _refs(now, results["for-each-ref"], self.why(results["for-each-ref"]))
        elif self._files is not None and self._files.refs is not None:
            now.refs = dict(self._files.refs)
        now.fetched = self._files.fetched() if self._files is not None else None
        if "log" in results and self._pinned is not None and now.head != self._pinned:  # HEAD moved after the files
            self._history(now, self.run({"log": self._log()})["log"])  # were read: asked again, up to HEAD now
        elif "log" in results:
            self._history(now, results["log"])
        elif self._same is not None and now.head == self._same:
            now.known = now.descendant = True  # HEAD is the checkpoint's: nothing since, no log needed
        elif self._same is not None:  # HEAD moved between the files' read and git status: ask git after all
            self._history(now, self.run({"log": self._log()})["log"])

    def _history(self, now: GitNow, log: proc.Result) -> None:
        """commits, more, known, descendant; round 2 (is-ancestor, reflog) only when round 1 did not settle it."""
        head = self._ckpt_head or "?"  # set: the log runs only when the checkpoint recorded a HEAD
        why = self.why(log)
        if why is not None:
            if log.code is not None and not log.missing and now.head is not None:
                now.known = False  # the checkpoint's commit is not in this repository (or HEAD is unborn)
                now.descendant = False
            else:
                now.unanswered["log"] = why
            return
        now.known = True
        boundary = _commits(now, log.out, self._inside)
        if (now.head or "").startswith(head) or any(b.startswith(head) for b in boundary):
            now.descendant = True
        elif not now.more:
            now.descendant = False  # every commit since it was listed, and none has it as a parent
        round2: dict[str, list[str]] = {}
        if now.descendant is None:
            round2["merge-base"] = ["merge-base", "--is-ancestor", head, "HEAD"]
        if now.descendant is False or (self._ckpt_branch is not None and now.branch != self._ckpt_branch):
            round2["reflog"] = ["reflog", "-n", "20", "-z", "--format=%gs", "HEAD", "--"]
        if round2:
            self._round2(now, round2)

    def _round2(self, now: GitNow, round2: dict[str, list[str]]) -> None:
        answers = self.run(round2)
        if "merge-base" in answers:
            base = answers["merge-base"]
            if base.code in (0, 1) and not base.timed_out:
                now.descendant = base.code == 0
            else:
                now.unanswered["merge-base"] = self.why(base) or "no answer"
        if "reflog" in answers:
            reflog, why = answers["reflog"], self.why(answers["reflog"])
            if why is None:
                now.reflog = [s for s in reflog.out.decode("utf-8", "replace").split("\0") if s.strip()][:20]
            else:
                now.unanswered["reflog"] = why


def _commits(now: GitNow, out: bytes, inside: Callable[[str], bool] | None = None) -> set[str]:
    """Fills now.commits (newest first, at most MAX_COMMITS) and now.more from `git log -z --boundary` (with
    --name-only when inside is given: each commit's files then, those inside the state folder left out); returns the
    boundary commits' hashes (the parents of the listed commits that are not listed)."""
    boundary: set[str] = set()
    current: Commit | None = None
    for entry in out.decode("utf-8", "replace").split("\0"):
        fields = entry.strip("\n").split("\x1f")
        if len(fields) != 6 or len(fields[0]) < 2 or not is_hash(fields[0][1:]):
            name = entry.lstrip("\n")
            if current is not None and current.files is not None and name and inside is not None and not inside(name):
                current.files.append(name)
            continue
        mark, sha = fields[0][0], fields[0][1:]
        current = None
        if mark == "-":
            boundary.add(sha)
        elif len(now.commits) < MAX_COMMITS:
            current = Commit(sha, fields[1].split(), fields[2], fields[3], fields[4], fields[5])
            current.files = [] if inside is not None else None
            now.commits.append(current)
        else:
            now.more = True
    return boundary


def _inside(root: str, top: str) -> Callable[[str], bool]:
    """Whether a path as git names it (relative to the work tree's top) lies in the state folder root."""
    rel = os.path.relpath(os.path.realpath(root), os.path.realpath(top)) if top else ".."
    if rel.startswith(".."):  # the state folder outside this work tree: none of its files is in it
        return lambda name: False
    if rel == ".":
        return lambda name: True
    rel = rel.replace(os.sep, "/")
    return lambda name: name == rel or name.startswith(rel + "/")


def direction_calls(main: str, head: str) -> dict[str, list[str]]:
    """direction's git calls: the commits on the main line that neither HEAD nor the checkpoint's commit holds (at
    most 21, newest first) and the user's email (to tell one's own commits from others')."""
    log = ["log", "-z", DIRECTION_FORMAT, f"--max-count={MAX_LISTED + 1}", main, "^HEAD", f"^{head}", "--"]
    return {"log": log, "config": ["config", "user.email"]}


def _refs(now: GitNow, result: proc.Result, why: str | None) -> None:
    if why is not None:
        now.unanswered["for-each-ref"] = why
        return
    for line in result.out.decode("utf-8", "replace").split("\n"):
        parts = line.split("\0")
        if len(parts) == 3 and parts[0] in MAIN_REFS:
            now.refs[parts[0]] = f"ref: {parts[2]}" if parts[2] else parts[1]


def recorded_head(value: object) -> str | None:
    """A recorded HEAD, if it is a hash (the WAL is untrusted: never an option or a revision expression)."""
    if isinstance(value, str) and 4 <= len(value) <= 64 and all(c in "0123456789abcdef" for c in value):
        return value
    return None


def deadline(scope: str) -> float:
    """Seconds each git call may take: 2 in hook scope, 10 in recover."""
    return RECOVER_DEADLINE if scope == "recover" else HOOK_DEADLINE


def environment(env: Mapping[str, str] | None) -> dict[str, str]:
    """The environment git runs with: env (None: this process's), git's own variables for another repository taken
    out, no optional locks (git status never writes the index under the user's git), git's words in English."""
    out = dict(os.environ if env is None else env, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    out.pop("GIT_DIR", None)
    out.pop("GIT_WORK_TREE", None)
    return out


def _kept(path: str, args: list[str]) -> proc.Result | None:
    """The answer an earlier probe kept at path for these git log arguments (_keep), or None: none kept, one for
    other arguments, or a file whose stamp does not match its bytes (torn or damaged)."""
    try:
        data = fsread.read_bytes(path, MAX_KEPT + 65)
    except (RehydrateError, OSError, ValueError):
        return None
    stamp, _, out = (data or b"").partition(b"\n")
    return proc.Result(0, out, b"") if data and stamp == _stamp(args, out) else None


def _keep(path: str, args: list[str], out: bytes) -> None:
    """Keeps a log's answer for the next probe: its arguments name the checkpoint's commit and HEAD's by their
    hashes (see the module's docstring). A cache (fsio.write_hint: no sync), stamped with the hash of the
    arguments and the bytes, that reads as absent when it does not match."""
    if len(out) <= MAX_KEPT:
        fsio.write_hint(path, _stamp(args, out) + b"\n" + out)


def _stamp(args: list[str], out: bytes) -> bytes:
    return sha256("\0".join(args).encode() + b"\0" + out).encode()


def status_started(root: str, env: Mapping[str, str] | None) -> proc.Batch:
    """`git status` for the state at root, started before the probe: it needs nothing the state says, so a session
    start runs it while the state is read and the checks load. The caller puts it in context.shared[STATUS_KEY],
    where the probe takes it, and calls its stop() once the checks ran: nothing when the probe waited for it, else
    (no probe took it: no checkpoint to compare with) git is stopped. The one prestart() started for root, if any,
    when env is this process's own."""
    early = _PRESTARTED.pop(root, None) if env is None or env is os.environ else None
    return early if early is not None else _status(root, env)


def _status(root: str, env: Mapping[str, str] | None) -> proc.Batch:
    return proc.start([["git", "-C", root, *STATUS]], env=environment(env))


_PRESTARTED: dict[str, proc.Batch] = {}  # git status started by prestart, by state root, until status_started


def prestart(root: str) -> None:
    """Starts status_started's `git status` for the state at root, in this process's environment, before the
    caller knows it will brief: a hook's session start, as soon as it finds its state (harness/percall.py), so that
    git runs while the brief's modules load. stop_prestarted() stops what nobody took."""
    if root not in _PRESTARTED:
        _PRESTARTED[root] = _status(root, None)


def stop_prestarted() -> None:
    """Stops and reaps each prestarted git status nobody took (proc.Batch.stop): at the end of the call."""
    while _PRESTARTED:
        _PRESTARTED.popitem()[1].stop()


def probe(context: Context) -> Probe:
    """Starts git for this run (see the module's docstring); kept by live-state in context.shared["gitnow"]. A git
    status started earlier (status_started) is taken from context.shared instead of starting another."""
    root = context.state.root if context.state is not None else None
    ckpt = context.since.git if context.since is not None else None
    status = context.shared.pop(STATUS_KEY, None) if root is not None else None
    if status is not None:
        status.from_now()  # its deadline counts from here: it was started before the state was read
    return Probe(root, environment(context.env), deadline(context.scope), ckpt, status)
