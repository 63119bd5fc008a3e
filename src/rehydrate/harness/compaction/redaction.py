"""What the capture takes out of transcript text before it reaches the committed log: every span a rule finds,
replaced by "[redacted]".

The rules are detect-secrets' detectors (Yelp, Apache-2.0; a dependency, so its rules are updated by its releases,
not by hand here) and, after them, the project's own (OWN, marked "rehydrate"): shell commands and headers that
carry a password or a session where no detector looks (`redis-cli -a`, `openssl -passin pass:`, `Cookie:`, `curl
-u`, `docker login -p`, ...), whole private key blocks, and key shapes detect-secrets does not know (Anthropic,
Google, Hugging Face, fine-grained GitHub tokens). A span found by several rules, or by overlapping ones, is
redacted once.

Left out of detect-secrets (LEFT_OUT): the detectors that would redact ordinary text (a public IP address; any
long hex or base64 string, which is also every commit id and hash), and KeywordDetector, whose patterns backtrack
without bound on a long line: its names are in the project's own `NAME=value` rule.

Cost: the rules are built once per process, on the first call, which only a capture (the PreCompact hook) makes:
detect-secrets' import is most of it (bench/redaction.py). Its detectors run on each line as detect-secrets scans,
a long line cut into overlapping windows (WINDOW) so that no pattern's backtracking grows with the line; a text of
one window is scanned whole. Each own rule is tried only on a text holding one of its words (`needs`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from re import Match, Pattern

REDACTED = "[redacted]"
UPSTREAM = "detect-secrets"
OWN_SOURCE = "rehydrate"
# the detectors whose matches are ordinary text as often as secrets: IP addresses, and any hex or base64 string of
# high entropy (commit ids, hashes, uuids), which would take much of a transcript with them; and KeywordDetector,
# whose patterns backtrack without bound on a long line (46 s on one line of 10,000 characters: a keyword repeated
# after an unclosed quote): its names are in the project's own name=value rule instead, whose quantifiers are bounded
LEFT_OUT = ("IPPublicDetector", "Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector")
# the detectors whose patterns hold a name or a URL before the secret, the secret in group 1: that group is
# redacted (the name kept); every other detector's match is the token itself, redacted whole
VALUE_IN_GROUP_1 = frozenset(
    {
        "AWSKeyDetector",
        "BasicAuthDetector",
        "CloudantDetector",
        "IbmCloudIamDetector",
        "IbmCosHmacDetector",
        "NpmDetector",
        "SoftlayerDetector",
    }
)
# detect-secrets' patterns run on windows of WINDOW characters of a line, each starting WINDOW - OVERLAP after the
# one before: a secret with its name of up to OVERLAP characters lies whole in one. Their cost on a long line is so
# bounded (NpmDetector's `//.+/:_authToken` tries the rest of the line at every `//`: 2 s on 10,000 characters).
WINDOW, OVERLAP = 1024, 256
EDGES = " \t\"'=:"  # a token pattern's own delimiters (Artifactory's start and end with one), never redacted


class Rule(NamedTuple):
    """A pattern, the group whose span is the secret (0: the whole match) and where the rule comes from
    ("detect-secrets:<detector>" or "rehydrate"). per_line: run on each line, not on the whole text. needs: words
    one of which the text must hold, case folded, for the pattern to be tried at all (none: always tried)."""

    pattern: Pattern[str]
    group: int
    source: str
    per_line: bool
    needs: tuple[str, ...] = ()


# the names whose value is a secret (the project's, with detect-secrets' KeywordDetector's)
NAMES = (
    r"(?:password|passwd|passphrase|pwd|token|secret|(?:api|access|private|priv|auth|service|account|client|db"
    r"|database)[_-]?key|(?:db|database|key)[_-]?pass|contrase[ñn]a|credentials?|cookies?)"
)

NAME_WORDS = ("pass", "pwd", "token", "secret", "key", "contrase", "credential", "cookie")  # one is in every NAMES

# The project's own rules, as data: (pattern, flags, the group that is the secret, the words one of which a text must
# hold for the pattern to be tried: a cheap test that spares most texts most patterns). Flags: "i" ignore case, "s"
# dot matches a line end. Each looks on the whole text; none crosses a line end but the private key block.
OWN: tuple[tuple[str, str, int, tuple[str, ...]], ...] = (
    # a private key block to its END line (or to the end of the text: the rest of a key is a key)
    (
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
        "s",
        0,
        ("private key-----",),
    ),
    (
        r"\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}",
        "",
        0,
        ("sk-", "rk-", "pk-"),
    ),  # OpenAI, Anthropic and similar keys
    (r"\b[srp]k_(?:live|test)_[A-Za-z0-9]{10,}", "", 0, ("k_live_", "k_test_")),  # Stripe, test keys too
    (
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}"
        r"|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,})",
        "",
        0,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "npm_", "hf_"),
    ),
    (r"\bAIza[0-9A-Za-z_-]{35}", "", 0, ("aiza",)),  # a Google API key
    (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "", 0, ("akia", "asia")),
    (r"\bxox[abposr]-[A-Za-z0-9-]{8,}", "", 0, ("xox",)),
    (r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "", 0, ("eyj",)),  # a JWT
    (
        r"\b(authorization\s*[:=]\s*(?:basic|bearer|token|digest)?\s*)([A-Za-z0-9._~+/=-]{8,})",
        "i",
        2,
        ("authorization",),
    ),
    (r"\b(bearer\s+)([A-Za-z0-9._~+/=-]{12,})", "i", 2, ("bearer",)),
    # the value after a name holding password, secret, token, an api, access or private key, credentials or cookie,
    # or one of detect-secrets' KeywordDetector's names (auth_key, db_pass, contraseña, ...), in the forms of its
    # test cases: `=`, `:`, `:=`, `==`, `!==`, `=>`, C#'s `@"..."`, an array's `name[] =`. The match starts at that
    # word, not at the start of the name holding it: what is before it is never redacted, and a pattern that could
    # start anywhere in a long word would try every place in it. An empty quoted value is no secret, and kept.
    (
        r"""(""" + NAMES + r"""[\w.-]{0,40}(?:\[\d*\])?["'`\]]{0,2})"""
        r"""(\s*(?:=>|:=|::?|={1,3}|!==?)\s*@?|\s+(?=["'`]))"""
        r"""("[^"\n]+"?|'[^'\n]+'?|`[^`\n]+`?|[^\s"'`&;,]+)""",
        "i",
        3,
        NAME_WORDS,
    ),
    # the same names compared with a quoted value before them (`if ("..." == password)`), or given one in a call
    # (`secret("...")`, `secret.assign("...")`)
    (r"""(["'`])([^"'`\n]+)\1\s*(?:!==?|={2,3})\s*[\w.-]{0,40}""" + NAMES, "i", 2, NAME_WORDS),
    (r"(" + NAMES + r"""[\w.-]{0,40}\(\s*)("[^"\n]+"|'[^'\n]+')""", "i", 2, NAME_WORDS),
    (
        r"(--?(?:password|passwd|token|secret|api-key)[= ]|--pass[= ])(\S+)",
        "i",
        2,
        ("pass", "token", "secret", "api-key"),
    ),
    (r"(\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p)(\S+)", "i", 2, ("mysql", "mariadb")),
    (
        r"(\b(?:sshpass|docker|podman|nerdctl|helm|oras|skopeo)\b[^\n|;&]*?\s-p\s+)(\S+)",
        "i",
        2,
        ("sshpass", "docker", "podman", "nerdctl", "helm", "oras", "skopeo"),
    ),
    # `-u user:password` (curl, httpie and the like; the user may be quoted apart or be an email address)
    (
        r"""((?:^|\s)(?:-u|--user)(?:\s+|=)(?:"[^"\s]+"|'[^'\s]+'|['"]?[^\s:'"]+):['"]?)([^\s'"]+)""",
        "",
        2,
        ("-u", "--user"),
    ),
    (r"(\b\w{1,20}://[^\s:/@]+:)([^\s@/]+)(@)", "i", 2, ("://",)),  # a URL's password
    (
        r"(\bredis-cli\b[^\n|;&]*?\s(?:-a|--pass)\s+)(\S+)",
        "",
        2,
        ("redis-cli",),
    ),  # redis-cli's password on its command line
    (r"\b(REDISCLI_AUTH=)(\S+)", "", 2, ("rediscli_auth",)),
    (r"((?:^|\s)-[\w-]*pass[\w-]*\s+pass:)(\S+)", "i", 2, ("pass:",)),  # openssl's -passin/-passout/-pass pass:PASSWORD
    (r"\b((?:set-)?cookie\s*:\s*)([^\n'\"]+)", "i", 2, ("cookie",)),  # a Cookie or Set-Cookie header: every value in it
    (r"(\bcurl\b[^\n|;&]*?\s(?:-b|--cookie)\s+)('[^'\n]*'?|\"[^\"\n]*\"?|\S+)", "", 2, ("curl",)),  # curl's cookies
    # connection strings' keys of any length (detect-secrets knows a storage account's 88 characters only)
    (
        r"\b((?:AccountKey|SharedAccessKey|SharedSecretValue)=)([^;\s\"']+)",
        "i",
        2,
        ("accountkey=", "sharedaccesskey=", "sharedsecretvalue="),
    ),
)

_RULES: list[Rule] | None = None


def rules() -> list[Rule]:
    """detect-secrets' detectors (those not LEFT_OUT), then OWN, compiled once."""
    global _RULES
    if _RULES is None:
        _RULES = [*_upstream(), *_own()]
    return _RULES


def _own() -> list[Rule]:
    flags = {"i": re.IGNORECASE, "s": re.DOTALL}
    out = []
    for pattern, letters, group, needs in OWN:
        flag = 0
        for letter in letters:
            flag |= flags[letter]
        out.append(Rule(re.compile(pattern, flag), group, OWN_SOURCE, False, needs))
    return out


def _upstream() -> list[Rule]:
    """Every regular-expression detector detect-secrets registers, read from its classes (so that a new release's
    new detectors are taken with it). Without detect-secrets (a broken install), none: the own rules still run."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:
        return []
    out = []
    detectors: list[type] = list(get_mapping_from_secret_type_to_class().values())
    for cls in detectors:
        name = cls.__name__
        if name in LEFT_OUT or not issubclass(cls, RegexBasedDetector):
            continue
        # A detector class sets denylist as a plain tuple; the base declares it an abstract property of instances.
        denylist: Iterable[Pattern[str]] = getattr(cls, "denylist", ())
        for pattern in denylist:
            group = 1 if name in VALUE_IN_GROUP_1 and pattern.groups >= 1 else 0
            out.append(Rule(pattern, group, f"{UPSTREAM}:{name}", True))
    return out


def redact(text: str) -> str:
    """text with every span a rule finds replaced by REDACTED (overlapping spans merged into one)."""
    merged: list[list[int]] = []
    for start, end in sorted(_spans(text)):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    if not merged:
        return text
    out: list[str] = []
    at = 0
    for start, end in merged:
        out += (text[at:start], REDACTED)
        at = end
    out.append(text[at:])
    return "".join(out)


def _spans(text: str) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    # a text of one window is scanned whole (one call per pattern, most texts a capture keeps are this short): no
    # detector's pattern takes a line end but as the blank around its token, so it finds what it finds line by line
    lines = [(0, text)] if len(text) <= WINDOW else _lines(text)
    folded = text.casefold()  # casefold, not lower: an ignore-case pattern takes "ſ" for "s", and so does this
    for rule in rules():
        if rule.needs and not any(word in folded for word in rule.needs):
            continue
        if rule.per_line:
            for offset, line in lines:
                found.extend(_span(m, rule.group, offset) for m in rule.pattern.finditer(line))
        else:
            found.extend(_span(m, rule.group, 0) for m in rule.pattern.finditer(text))
    return [(start, end) for start, end in found if end > start]


def _span(m: Match[str], group: int, offset: int) -> tuple[int, int]:
    start, end = m.span(group)
    if start < 0:  # the group took no part: the whole match is the secret
        start, end = m.span()
    if group == 0:
        token = m.group()
        start += len(token) - len(token.lstrip(EDGES))
        end -= len(token) - len(token.rstrip(EDGES))
    return start + offset, end + offset


def _lines(text: str) -> list[tuple[int, str]]:
    """Each line of text with where it starts, a line longer than WINDOW as its overlapping windows."""
    out: list[tuple[int, str]] = []
    at = 0
    for line in text.split("\n"):
        step = WINDOW - OVERLAP
        starts = range(0, max(len(line) - OVERLAP, 1), step) if len(line) > WINDOW else (0,)
        out.extend((at + start, line[start : start + WINDOW]) for start in starts)
        at += len(line) + 1
    return out
