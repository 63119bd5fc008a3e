"""What the capture redacts before it reaches the committed log: detect-secrets' detectors (a dependency) and the
project's own rules (harness/compaction/redaction.py), through a real PreCompact hook and rule by rule.

The secrets here are made up in each detector's shape; none is a real credential. The detectors' own published
examples are checked by test_upstream_examples, from shared/fixtures/secrets when it is beside the checkout."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import hook_event, records, run_hook
from rehydrate.harness.compaction.capture import REDACTED, redact
from rehydrate.store.state import State
from scenarios.transcripts import Claude, stamp

B64 = "Zm9vYmFyYmF6cXV4" * 6  # base64 letters, not a key
AZURE_KEY = (B64[:86] + "==").replace("Zm9v", "Ab+/", 3)  # 88 characters, as a storage account key is
AZURE = f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net"
REDIS_PASS = "r3dis-Passw0rd-7Q"
COOKIE = "9f8e7d6c5b4a32100fedcba9"
OPENSSL_PASS = "Tr0ub4dor-and-3"
# detect-secrets' detectors, in their shapes (made up here)
SLACK_HOOK = "https://hooks.slack.com/services/T0ABCDEFG/B0HIJKLMN/" + "q1w2e3r4t5y6u7i8o9p0a1s2"
SENDGRID = "SG." + "a1B2c3D4e5F6g7H8i9J0kL" + "." + "M1n2O3p4Q5r6S7t8U9v0W1x2Y3z4A5b6C7d8E9f0G1h"
TWILIO = "SK" + "0123456789abcdef" * 2
STRIPE = "rk_live_" + "51Hq2xYzAbCdEfGhIjKlMnOp"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWc"

ORDINARY = (
    "the parser passes 31 tests at 3f2a9c1d7e8b6a5f4c3d2e1f0a9b8c7d6e5f4a3b",
    "git checkout -b feature/redis-pool && mkdir -p build",
    "see docs/cookie-policy.md and session.py for the 127.0.0.1:6379 setup",
)


def _transcript(t: Claude, ts: str) -> None:
    """A session after the checkpoint: the item's four secrets and a few detector-shaped ones, in the places the
    capture copies (prompts, failed commands and their first error line, the assistant's last words)."""
    t.at(stamp(ts, 60))
    t.user(f"{ORDINARY[0]}\nuse the storage string {AZURE} for the blob tests")
    t.bash(f"redis-cli -h cache -a {REDIS_PASS} ping", "NOAUTH Authentication required.", exit_code=1)
    t.bash(f"curl -H 'Cookie: session={COOKIE}; theme=dark' https://app.example/api", "401", exit_code=1)
    t.bash(
        f"openssl pkcs12 -in cert.p12 -passin pass:{OPENSSL_PASS} -nodes",
        f"Error: post to {SLACK_HOOK} failed",
        exit_code=1,
    )
    t.user(f"{ORDINARY[1]}\nthe mail key is {SENDGRID} and twilio's is {TWILIO}")
    t.user(f"{ORDINARY[2]}\nstripe: {STRIPE}")
    t.assistant_text(f"Done; the token was {JWT}.")


SECRETS = (AZURE_KEY, REDIS_PASS, COOKIE, OPENSSL_PASS, SLACK_HOOK, SENDGRID, TWILIO, STRIPE, JWT)


def _everything(root: Path) -> str:
    """Every file under root, as text (bytes that are not UTF-8 replaced)."""
    out = []
    for folder, _, files in os.walk(root):
        out.extend((Path(folder) / name).read_bytes().decode(errors="replace") for name in files)
    return "\n".join(out)


def test_a_precompact_capture_leaves_no_secret_in_any_state_file(repo: Path, state: State, isolated_home: Path) -> None:
    """The real PreCompact hook on a transcript holding an Azure AccountKey, `redis-cli -a`, a Cookie header and
    `openssl -passin pass:`, and detector-shaped keys: none reaches state/ (the WAL, the views) nor the worktree's
    own folder under .git/rehydrate; the ordinary words around them do."""
    ckpt = [r for r in records(state.root) if r["op"] == "checkpoint"][-1]
    t = Claude(isolated_home, repo)
    _transcript(t, ckpt["ts"])
    code, _, err = run_hook("claude", hook_event(repo, "claude", "PreCompact-auto", transcript_path=str(t.path)), repo)
    assert code == 0, err
    capture = records(state.root)[-1]["data"]["capture"]
    assert capture["error"] is None and len(capture["failed"]) == 3 and len(capture["user"]) == 3
    stored = _everything(repo / "state") + _everything(repo / ".git" / "rehydrate")
    assert [s for s in SECRETS if s in stored] == []
    wal = (repo / "state" / "wal" / "agent.jsonl").read_text()
    assert all(json.dumps(text)[1:-1] in wal for text in ORDINARY)  # ordinary text survives, escaped as JSON
    assert [f["command"] for f in capture["failed"]] == [
        f"redis-cli -h cache -a {REDACTED} ping",
        f"curl -H 'Cookie: {REDACTED}' https://app.example/api",
        f"openssl pkcs12 -in cert.p12 -passin pass:{REDACTED} -nodes",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (AZURE, f"DefaultEndpointsProtocol=https;AccountName=acct;{REDACTED};EndpointSuffix=core.windows.net"),
        ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=abcDEF123+/=",
         f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName={REDACTED};SharedAccessKey={REDACTED}"),
        (f"redis-cli --pass {REDIS_PASS} -n 2", f"redis-cli --pass {REDACTED} -n 2"),
        (f"REDISCLI_AUTH={REDIS_PASS} redis-cli ping", f"REDISCLI_AUTH={REDACTED} redis-cli ping"),
        (f"Set-Cookie: sid={COOKIE}; Path=/; HttpOnly", f"Set-Cookie: {REDACTED}"),
        (f"curl -b 'sid={COOKIE}' https://x", f"curl -b {REDACTED} https://x"),
        (f"openssl enc -aes-256-cbc -pass pass:{OPENSSL_PASS}", f"openssl enc -aes-256-cbc -pass pass:{REDACTED}"),
        ("openssl rsa -passin env:KEY_PASS -in k.pem", "openssl rsa -passin env:KEY_PASS -in k.pem"),  # a name only
        (f"notify {SLACK_HOOK} now", f"notify {REDACTED} now"),
        (f"key {SENDGRID}", f"key {REDACTED}"),
        (f"sid {TWILIO}.", f"sid {REDACTED}."),
        (f"{STRIPE}", REDACTED),
        ('aws_key_id = "' + "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY0" + '"', f'aws_key_id = "{REDACTED}"'),
        ("mailchimp 0123456789abcdef0123456789abcdef-us12", f"mailchimp {REDACTED}"),
        ('db.connect(password="hunter2")', f"db.connect(password={REDACTED})"),
        # the name=value forms of detect-secrets' KeywordDetector's test cases
        ('apikey := "m3-hidden-value"', f"apikey := {REDACTED}"),
        ('if (api_key == "m3-hidden-value") {', f"if (api_key == {REDACTED}) {{"),
        ('if ("m3-hidden-value" !== my_password) {', f'if ("{REDACTED}" !== my_password) {{'),
        ('password => "m3-hidden-value"', f"password => {REDACTED}"),
        ('char secrete[25] = @"m3-hidden-value";', f"char secrete[25] = @{REDACTED};"),
        ('std::string secret("m3-hidden-value");', f"std::string secret({REDACTED});"),
        ("passwd = m{{h}o)p${e]nob(ody", f"passwd = {REDACTED}"),  # a parenthesis does not end it
        ('api_key = ""', 'api_key = ""'),  # nothing to hide
        ("curl --user me@example.com:pQ9wTxu4Fg https://x", f"curl --user me@example.com:{REDACTED} https://x"),
        (*ORDINARY[:1], ORDINARY[0]),
        (*ORDINARY[1:2], ORDINARY[1]),
        (*ORDINARY[2:], ORDINARY[2]),
    ],
)  # fmt: skip
def test_rules(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_the_rule_set_is_detect_secrets_and_the_projects_own() -> None:
    """Each rule names where it comes from; detect-secrets' detectors are there (not only the project's own), and
    those left out are the ones that would redact ordinary text (public IPs, any long hex or base64 string) and
    the one whose patterns backtrack without bound on a long line (KeywordDetector)."""
    from rehydrate.harness.compaction import redaction

    rules = redaction.rules()
    upstream = {r.source for r in rules if r.source.startswith("detect-secrets:")}
    assert {"detect-secrets:AzureStorageKeyDetector", "detect-secrets:SlackDetector"} <= upstream
    assert len(upstream) >= 20
    assert not {f"detect-secrets:{n}" for n in redaction.LEFT_OUT} & upstream
    assert {r.source for r in rules} - upstream == {"rehydrate"}


def test_a_hostile_line_is_redacted_in_bounded_time() -> None:
    """The capture redacts at most a few KiB of each text; even the worst shapes for the detectors' patterns (a
    keyword repeated without a closing quote, one endless token) take well under a second each."""
    shapes = [
        "password='" + "password" * 1300,
        'secret:"' + "a" * 10000,
        "AccountKey=" + "A" * 10000,
        "://" + "a:" * 5000,
        "eyJ" + "a." * 5000,
        "x" * 10000,
        "//" * 5000,
        "xoxb-" + "1-" * 5000 + "!",
        "a@" * 5000,
        "cookie: " + "a=" * 5000,
        "curl " + "-b " * 3000,
        "redis-cli " + "-a " * 3000,
        '"a" == ' * 1500,
        "password(" * 1100,
        "secret" * 1600,
        ("key=" + "v" * 50 + " ") * 180,
    ]
    redact("warm the rules up")
    for text in shapes:
        start = time.perf_counter()
        redact(text)
        assert time.perf_counter() - start < 1.0, text[:20]


# beside the checkout as CI lays it out; REHYDRATE_UPSTREAM_EXAMPLES names another copy of the same file
UPSTREAM = Path(
    os.environ.get("REHYDRATE_UPSTREAM_EXAMPLES")
    or Path(__file__).resolve().parents[4] / "shared" / "fixtures" / "secrets" / "upstream-examples.json"
)


@pytest.mark.skipif(not UPSTREAM.is_file(), reason="shared/fixtures/secrets is not beside this checkout")
def test_upstream_examples() -> None:
    """detect-secrets' own test cases for its detectors (shared/fixtures/secrets, with its NOTICE.md): every string a
    detector flags is redacted so that none of the values detect-secrets finds in it is left, but for the detectors
    left out on purpose (IP addresses); of the strings no detector flags, at least half are kept whole (redacting
    more than a secret is allowed, keeping one is not). The counts are printed."""
    from rehydrate.harness.compaction import redaction

    examples: list[dict[str, Any]] = json.loads(UPSTREAM.read_text())["examples"]
    skipped = set(redaction.LEFT_OUT) - {"KeywordDetector"}  # its names are the own name=value rule's
    secrets = [e for e in examples if e["secret"] and e["detector"] not in skipped]
    kept = [e for e in secrets if redact(e["text"]) == e["text"] or any(v in redact(e["text"]) for v in e["values"])]
    others = [e for e in examples if not e["secret"]]
    whole = [e for e in others if redact(e["text"]) == e["text"]]
    print(
        f"upstream secrets redacted: {len(secrets) - len(kept)}/{len(secrets)}; others kept: {len(whole)}/{len(others)}"
    )
    assert [(e["detector"], e["text"]) for e in kept] == []
    assert len(whole) * 2 >= len(others)


def test_without_detect_secrets_the_own_rules_still_redact_the_four() -> None:
    """A broken install (detect-secrets not importable) costs the detectors' extra shapes, never the capture: the
    project's own rules still take the Azure key, the redis, Cookie and openssl passwords."""
    import subprocess
    import sys

    probe = (
        "import sys; sys.modules['detect_secrets'] = None\n"
        "from rehydrate.harness.compaction import redaction\n"
        "print(sorted({r.source for r in redaction.rules()}))\n"
        "print(redaction.redact(sys.argv[1]))\n"
    )
    text = f"{AZURE} redis-cli -a {REDIS_PASS} -H 'Cookie: s={COOKIE}' -passin pass:{OPENSSL_PASS}"
    out = subprocess.run([sys.executable, "-c", probe, text], capture_output=True, text=True, check=True).stdout
    sources, redacted = out.splitlines()
    assert sources == "['rehydrate']"
    assert not [s for s in (AZURE_KEY, REDIS_PASS, COOKIE, OPENSSL_PASS) if s in redacted]
