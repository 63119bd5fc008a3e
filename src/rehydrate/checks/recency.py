"""recency: the actor's own last turns since the last checkpoint, from the transcript's tail.

Contract:
- Candidates: `context.transcript` (`recover --transcript`: trusted, read alone); otherwise `context.since.transcripts`
  (the hooks' own `compaction`, `precompress` and `resume` records after the checkpoint, newest first, at most 3) and
  `context.event.transcript_path` when that file exists. A path read from the WAL is untrusted: it is read only when
  it was recorded on this host (else n/a "recorded on host X: not looked at here"), lies under its harness's own
  transcripts folder after realpath (else skipped "not under Claude Code's transcripts folder: not read"), is a
  regular file, and its records name this project (else skipped "names another project"). Recorded with
  `transcript_size` None and still missing: ignored (it was never written). Recorded with a size and now gone: skipped
  ("the transcript the hooks recorded at record 57 is gone (...): what happened since checkpoint 42 was not looked
  at"), quoting the capture's facts when the WAL holds one.
- Reads with `transcripts.recent.read_since(path, since.ts, loads=safejson.loads, max_bytes=...)`: at most 4 MiB back
  from the end in hook scope, 64 MiB in recover scope; cost follows what was written since the checkpoint. When cut,
  the finding says how much was left unread and that `rehydrate recover` reads more.
- n/a: no transcript recorded by a hook since the checkpoint and none given: "no transcript recorded by a hook since
  checkpoint 42 (looked at the 9 WAL records since it) and none given with --transcript".
- ok: read back to the checkpoint and no changing call (edit, shell, patch, unknown tool) after it; it names the file
  and how much was read.
- degraded: a changing call after the checkpoint: names the files edited (at most 10), the command that failed last,
  the last user instruction and any compaction since; next: "the checkpoint's next step, "X", was worked on after the
  checkpoint (a.py, b.py edited): check them (git diff) before redoing it".
- Everything quoted from a transcript is untrusted text: cleaned to one line here, fenced by the brief.
The transcript readers (transcripts/, checks/aftercapture.py) are imported where a transcript is read, not at the
top: a session start with no transcript to read (most `resume` calls) loads none of them.
"""

from __future__ import annotations

import os
import stat

from rehydrate import safejson
from rehydrate.checks import DEGRADED, NA, OK, SKIPPED, Finding, Quoting
from rehydrate.store.wal import since as wal_since  # host() looked up at each call
from rehydrate.text import clean, no_escapes, quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from rehydrate.checks import Context
    from rehydrate.store.wal.since import Since, TranscriptRef
    from rehydrate.transcripts.model import Recent

NAME = "recency"
HOOK_BYTES = 4 << 20  # the most a hook-scope read takes from a transcript's end
RECOVER_BYTES = 64 << 20  # the most `rehydrate recover` reads
MAX_FILES = 10  # files edited named in a finding
MAX_QUOTE, MAX_PATH = 200, 200  # characters of transcript text quoted in a finding

# Each harness's own transcripts folder: (its name in a finding, the folder inside the harness's user folder). The
# user folders and the variables that move them are the transcript formats' (transcripts.claude.home and
# transcripts.codex.home, read from the context's env); Gemini CLI's is ~/.gemini. A path recorded in the WAL is read
# only inside it.
FOLDERS = {
    "claude": ("Claude Code's transcripts folder", "projects"),
    "codex": ("Codex's sessions folder", "sessions"),
    "gemini": ("Gemini CLI's chats folder", "tmp"),
}


class _Candidate:
    """A transcript to look at: its path, harness (None: detected), the size and host its record gave, the record's
    seq, and whether it is trusted (given with --transcript, or the hook event's own: no folder, host or project
    test)."""

    __slots__ = ("harness", "host", "path", "seq", "size", "trusted")

    def __init__(
        self,
        path: str,
        harness: str | None,
        *,
        size: int | None = None,
        host: str | None = None,
        seq: int | None = None,
        trusted: bool = False,
    ) -> None:
        self.path, self.harness, self.size, self.host, self.seq, self.trusted = path, harness, size, host, seq, trusted


class RecencyCheck:
    name = NAME

    def run(self, context: Context) -> list[Finding]:
        if context.state is None:
            return [Finding(NAME, NA, "the state did not load: no transcript looked at")]
        since = context.since
        if since is None:
            return [Finding(NAME, SKIPPED, "the WAL since the last checkpoint was not read: no transcript looked at")]
        env = context.env if context.env is not None else os.environ
        look = _Look(context, since, env)
        if context.transcript is not None:  # recover --transcript: the user named it, read alone
            found = look.read(_Candidate(context.transcript, None, trusted=True), "given with --transcript")
            return [found] if found is not None else []
        findings = [f for f in (look.candidate(c) for c in _candidates(context, since)) if f is not None]
        return findings or [look.nothing()]


def _candidates(context: Context, since: Since) -> list[_Candidate]:
    """The hook event's own transcript when it exists (the harness is the authority for its own event), then the
    transcripts the hooks recorded since the checkpoint, newest first; each path once."""
    found: list[_Candidate] = []
    event = context.event
    path = event.transcript_path if event is not None else None
    if event is not None and isinstance(path, str) and path and os.path.isfile(path):
        found.append(_Candidate(path, event.harness, trusted=True))
    for ref in since.transcripts:
        if all(c.path != ref.path for c in found):
            found.append(_from_ref(ref))
    return found


def _from_ref(ref: TranscriptRef) -> _Candidate:
    return _Candidate(ref.path, ref.harness, size=ref.size, host=ref.host, seq=ref.seq)


class _Look:
    """One run's look at its candidates: the scope's bound, the environment that places each harness's folder, the
    project's root (a recorded transcript's records must name it)."""

    def __init__(self, context: Context, since: Since, env: Mapping[str, str]) -> None:
        assert context.state is not None
        self.since = since
        self.env = env
        self.recover = context.scope == "recover"
        self.cap = RECOVER_BYTES if self.recover else HOOK_BYTES
        self.project = os.path.dirname(context.state.root)
        self.where = _where(since)

    def nothing(self) -> Finding:
        read = f"the {self.since.records} WAL record{_s(self.since.records)}"
        if not self.since.complete:  # a transcript recorded in what was not read back is unknown, not absent
            nxt = "read the transcript yourself, or give it with `rehydrate recover --transcript PATH`, before going on"
            return Finding(NAME, SKIPPED, f"no transcript in {read} read back; {self.since.problem}", nxt)
        read += " since it"
        return Finding(
            NAME,
            NA,
            f"no transcript recorded by a hook {_where(self.since, stamp=False)} (looked at {read}) and none "
            "given with --transcript",
        )

    def candidate(self, c: _Candidate) -> Finding | None:
        """The finding for one candidate, or None for a transcript that was never written (recorded before its first
        line, still missing): nothing to look at there."""
        if c.trusted:
            return self.read(c, "the hook event's own")

        q = Quoting()
        shown = self.show(q, c)
        if c.host != wal_since.host():
            who = f"host {q('host', f'WAL record {c.seq}', _quote(c.host, 100))}" if c.host else "an unnamed host"
            return Finding(
                NAME, NA, f"the transcript {shown} was recorded on {who}: not looked at here", quotes=q.quotes
            )
        if c.size is None and not os.path.lexists(c.path):
            return None
        refused = self.refuse(c, q)
        if refused is not None:
            text = f"the transcript {shown} recorded at record {c.seq} {refused}: not read"
            return Finding(NAME, SKIPPED, text, quotes=q.quotes)
        if not os.path.lexists(c.path):
            return self.gone(c)
        # the resolved path, as the folder test saw it: a link swapped in after the test is not followed out
        return self.read(c, f"recorded at record {c.seq}", os.path.realpath(c.path))

    def refuse(self, c: _Candidate, q: Quoting) -> str | None:
        """Why a WAL-recorded path must not be read (None: it may): not under its harness's own transcripts folder
        after every symbolic link is resolved, or a harness this check does not know."""
        if c.harness not in FOLDERS:
            return f"names no harness rehydrate knows ({q('harness', f'WAL record {c.seq}', _quote(c.harness, 40))})"
        label, sub = FOLDERS[c.harness]
        base = _user_folder(c.harness, self.env)
        if not os.path.isabs(base):
            return f"cannot be placed: no absolute home folder to find {label} in"
        folder = os.path.join(os.path.realpath(base), sub)
        if not os.path.realpath(c.path).startswith(folder + os.sep):
            return f"is not under {label} ({self.home(folder)})"
        return None

    def gone(self, c: _Candidate) -> Finding:
        q = Quoting()
        what = f"what happened {self.where} was not looked at"
        facts = _capture_facts(self.since.capture, q)
        shown = self.show(q, c)
        message = f"the transcript the hooks recorded at record {c.seq} is gone ({shown}): {what}{facts}"
        nxt = "look at git status and git diff for the work since the checkpoint"
        return Finding(NAME, SKIPPED, message, nxt, quotes=q.quotes)

    def read(self, c: _Candidate, how: str, path: str | None = None) -> Finding | None:
        """Read the candidate (at path, its resolved form, when given) within the scope's bound."""
        from rehydrate.transcripts.recent import read_since

        q = Quoting()
        shown = self.show(q, c)
        try:
            path = path or c.path
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                text = f"the transcript {shown} ({how}) is not a regular file: not read"
                return Finding(NAME, SKIPPED, text, quotes=q.quotes)
            from rehydrate.checks import aftercapture

            captured = aftercapture.usable(self.since, c.path, c.trusted and not self.recover, info.st_size)
            if captured is not None:
                seen = aftercapture.after(captured, path, info.st_size, self.since.ts, self.project, c.harness)
                return self.report(seen, shown, q)  # type: ignore[arg-type]
            recent = read_since(
                path,
                self.since.ts,
                loads=safejson.loads,
                max_bytes=self.cap,
                harness=c.harness,
                project=None if c.trusted else self.project,
                todos_back=0,  # the task list is the capture's: no reading on past the checkpoint for it
            )
        except (OSError, ValueError) as e:
            why = clean(e.strerror or str(e) if isinstance(e, OSError) else str(e), one_line=True)[:200]
            text = f"the transcript {shown} ({how}) could not be read ({q('error', 'the system', why)}): not looked at"
            return Finding(NAME, SKIPPED, text, quotes=q.quotes)
        if recent.foreign:
            text = f"the transcript {shown} ({how}) names another project: not read"
            return Finding(NAME, SKIPPED, text, quotes=q.quotes)
        if c.trusted:  # read without the project test: its paths made relative here, as a recorded one's are
            from rehydrate.transcripts.model import inside, roots_of

            roots = roots_of(self.project)
            recent.edited = list(dict.fromkeys(inside(p, roots) for p in recent.edited))
        return self.report(recent, shown, q)

    def report(self, r: Recent, shown: str, q: Quoting) -> Finding:
        """ok, degraded or skipped for what the transcript says happened since the checkpoint."""
        harness = r.harness if r.harness in FOLDERS else "unknown"
        what = f"{self.where}, {harness} transcript {shown}"
        cut = self.cut_note(r)
        if r.changing_calls:
            # the cut note first: a long list of files must not push it past the finding's bound
            work, files = _work(r, q)
            return Finding(NAME, DEGRADED, f"{what}{cut}: {work}", self.next_action(r, q, files), quotes=q.quotes)
        told = f"{_count(len(r.user), 'user message')}, no file edited, no command run"
        if r.cut:
            text = f"{what}: {told} in what was read{cut}: older work not looked at"
            return Finding(NAME, SKIPPED, text, quotes=q.quotes)
        return Finding(NAME, OK, f"{what} (read {_size(r.size - r.read_from)} back to it): {told}", quotes=q.quotes)

    def cut_note(self, r: Recent) -> str:
        if not r.cut:
            return ""
        more = "" if self.recover else f"; `rehydrate recover` reads up to {_size(RECOVER_BYTES)}"
        read = _size(r.size - r.read_from)
        return f" (read the last {read} of {_size(r.size)} without reaching the checkpoint{more})"

    def next_action(self, r: Recent, q: Quoting, files: str | None) -> str:
        """What to do first, naming the checkpoint's step and the files by their quotes' references."""
        step = (
            q("the checkpoint's next step", f"checkpoint {self.since.seq}", self.since.next)
            if self.since.next
            else None
        )
        if step and files:
            return (
                f"the checkpoint's next step, {step}, was edited in {files} after the checkpoint: "
                "check it (git diff) before redoing it"
            )
        if step:
            calls = _count(r.changing_calls, "changing tool call")
            return (
                f"the checkpoint's next step, {step}, was worked on after the checkpoint ({calls}, no file edited): "
                "check git status and the last commands before redoing it"
            )
        return f"work happened after the checkpoint ({files or 'commands run'}): check it (git diff) before going on"

    def show(self, q: Quoting, c: _Candidate) -> str:
        """The candidate's path as a finding names it: by its quote's reference (the home folder as ~)."""
        where = f"WAL record {c.seq}" if c.seq is not None else "the hook event or --transcript"
        return q("transcript path", where, self.home(c.path))

    def home(self, path: str) -> str:
        """A path as a finding shows it: one clean line, the home folder as ~, its end kept when long."""
        home = self.env.get("HOME") or ""
        if home and os.path.isabs(home) and path.startswith(home.rstrip(os.sep) + os.sep):
            path = "~" + path[len(home.rstrip(os.sep)) :]
        line = clean(path, one_line=True)
        return line if len(line) <= MAX_PATH else "…" + line[-(MAX_PATH - 1) :]


def _user_folder(harness: str, env: Mapping[str, str]) -> str:
    """The harness's user folder as the context's environment places it (relative when it cannot)."""
    if harness == "gemini":
        return os.path.join(env.get("HOME") or "", ".gemini")
    if harness == "codex":
        from rehydrate.transcripts import codex

        return codex.home(env)
    from rehydrate.transcripts import claude

    return claude.home(env)


def _work(r: Recent, q: Quoting) -> tuple[str, str | None]:
    """What a transcript shows was done since the checkpoint, in computed words, what it quotes by reference (the
    files edited, the last instruction); and the files' reference, for the next action."""
    parts = [_count(r.tool_calls, "tool call")]
    files = q("files edited", f"{r.harness} transcript", _files(r.edited, MAX_FILES)) if r.edited else None
    parts.append(f"files edited: {files}" if files else "no file edited")
    failed = [f for f in r.failed if not f.later_ok]
    if failed:
        last = failed[-1]
        code = f", exit {last.exit}" if isinstance(last.exit, int) else ""
        tool = _name(last.tool) or "a command"  # its command is not quoted here: it may hold a secret (the
        parts.append(f"{_count(len(failed), 'command')} failed, the last by {tool}{code}")  # capture redacts it)
    if r.user:
        said = r.user[-1]
        text = redact_words(_quote(said.text, MAX_QUOTE))
        parts.append(f"last instruction{_at(said.ts)}: {q('last instruction', f'{r.harness} transcript', text)}")
    if r.compacted_at:
        parts.append("compacted at " + ", ".join(_hhmm(ts) for ts in r.compacted_at[-3:]))
    return "; ".join(parts), files


def _name(word: object) -> str:
    """A tool's name as computed text: letters, digits, `_`, `-` and `.` only, at most 40."""
    return "".join(c for c in str(word)[:40] if c.isascii() and (c.isalnum() or c in "_-."))


SECRET_PREFIXES: tuple[str, ...] = ("sk-", "sk_live_", "sk_test_", "rk_live_", "ghp_", "gho_", "ghs_", "ghu_")
SECRET_PREFIXES += ("ghr_", "github_pat_", "glpat-", "npm_", "hf_", "xoxb-", "xoxp-", "xoxa-", "AKIA", "ASIA", "AIza")
SECRET_PREFIXES += ("eyJ",)
SECRET_NAMES = ("password", "passwd", "passphrase", "secret", "token", "api_key", "apikey", "api-key", "access_key")


def redact_words(text: str) -> str:
    """text with what looks like a secret replaced by [redacted], with str methods (the SessionStart hook loads no
    re; harness/compaction/capture.py's redact() is the thorough one): a word of 16 characters or more starting like a
    known key (sk-, ghp_, AKIA, ...), the value of NAME=value or NAME: value when NAME holds password, secret, token or
    an api or access key, and the word after such a name ending in ":" or "=", after -p, --password, --token or
    bearer."""
    out: list[str] = []
    hide_next = False
    for word in text.split(" "):
        bare = word.strip("\"'`,;()[]{}")
        low = bare.lower()
        name, sep, value = bare.partition("=") if "=" in bare else bare.partition(":")
        if hide_next and bare:
            out.append("[redacted]")
            hide_next = False
            continue
        if len(bare) >= 16 and bare.startswith(SECRET_PREFIXES):
            out.append("[redacted]")
        elif sep and value and any(n in name.lower() for n in SECRET_NAMES):
            out.append(word.replace(value, "[redacted]", 1))
        else:
            out.append(word)
            named = bool(sep) and not value and any(n in name.lower() for n in SECRET_NAMES)  # "password: x"
            hide_next = named or low in ("-p", "--password", "--token", "bearer")
    return " ".join(out)


def _capture_facts(capture: object, q: Quoting) -> str:
    """What the newest compaction's capture recorded (it arrived with the WAL: shapes checked), as "; the
    compaction's capture recorded files edited: Q1, 1 failed command", or "" when it holds nothing."""
    if not isinstance(capture, dict):
        return ""
    edited = capture.get("edited")
    files = edited.get("files") if isinstance(edited, dict) else None
    names = [f for f in files if isinstance(f, str)] if isinstance(files, list) else []
    failed = capture.get("failed")
    parts = []
    if names:
        parts.append(f"files edited: {q('files edited', 'the capture', _files(names, MAX_FILES))}")
    if isinstance(failed, list) and failed:
        parts.append(_count(len(failed), "failed command"))
    return "; the compaction's capture recorded " + ", ".join(parts) if parts else ""


def _files(paths: list[str], most: int, room: int = 540) -> str:
    """At most `most` paths, within `room` characters (a quote's bound), and how many more."""
    shown: list[str] = []
    for p in paths[:most]:
        one = _quote(p, MAX_PATH)
        if shown and sum(len(s) + 2 for s in shown) + len(one) > room:
            break
        shown.append(one)
    left = len(paths) - len(shown)
    return ", ".join(shown) + (f" (and {left} more)" if left > 0 else "")


def _quote(text: object, most: int) -> str:
    """Transcript or WAL text as one clean line of at most `most` characters, terminal escapes taken out whole."""
    line = clean(no_escapes(str(text)[: 4 * most]), one_line=True)
    return line if len(line) <= most else line[: most - 1] + "…"


def _where(since: Since, *, stamp: bool = True) -> str:
    """ "since checkpoint 42 (22:04Z)", its time left out when stamp is False."""
    if since.seq is None:
        return "with no checkpoint found"
    return f"since checkpoint {since.seq}" + (f" ({_hhmm(since.ts)})" if since.ts and stamp else "")


def _hhmm(ts: str) -> str:
    """HH:MMZ of a stamp (YYYY-MM-DDTHH:MM...), cleaned; the stamp itself, quoted, when it has no such shape."""
    ts = _quote(ts, 40)
    hhmm = ts[11:16] if len(ts) >= 16 and ts[10] == "T" else ""
    return hhmm + "Z" if len(hhmm) == 5 and hhmm[2] == ":" and (hhmm[:2] + hhmm[3:]).isdigit() else quoted(ts)


def _at(ts: str | None) -> str:
    return f" at {_hhmm(ts)}" if ts else ""


def _count(n: int, what: str) -> str:
    return f"{n} {what}{_s(n)}"


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1 << 20:
        return f"{n / 1024:.0f} KiB"
    return f"{n / (1 << 20):.0f} MiB"
