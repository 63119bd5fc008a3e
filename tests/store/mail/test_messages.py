"""store/mail/messages.py: a message file's name and body, each checked against the other."""

from __future__ import annotations

from rehydrate.store.mail import messages

TS = "2026-12-01T05:58:07.245Z"


def test_a_file_name_gives_back_its_time_sender_and_id() -> None:
    name = messages.file_name(TS, "tess", "M-0123abcd")
    assert name == "20261201T055807245Z-tess-M-0123abcd.md"
    assert messages.parse_name(name) == ("20261201T055807245Z", "tess", "M-0123abcd")
    for bad in ("20261201T055807245Z-tess-M-0123abcd.txt", "20261201T055807245Z--lead-M-0123abcd.md", "x.md"):
        assert messages.parse_name(bad) is None, bad
    assert messages.parse_name(messages.file_name(TS, "tess", "M-0123ABCD")) is None
    assert messages.is_id("M-0123abcd") and not messages.is_id("M-0123abc")


def test_a_rendered_message_parses_back_and_any_mismatch_is_named() -> None:
    name = messages.file_name(TS, "tess", "M-0123abcd")
    data = messages.render("tess", "agent", "fyi", TS, "M-0123abcd", "the parser is yours\n")
    parsed = messages.parse(data, name, "agent")
    assert isinstance(parsed, tuple)
    fields, text = parsed
    assert text == "the parser is yours\n" and fields["from"] == "tess" and fields["kind"] == "fyi"
    assert messages.parse(data, name, "bob") == "its header names another recipient or an unknown kind"
    assert messages.parse(data + b"more", name, "agent") == "its text does not match its sha256 header"
    other = messages.file_name(TS, "bob", "M-0123abcd")
    assert messages.parse(data, other, "agent") == "its header does not match its file name"
    assert messages.parse(b"\xff", name, "agent") == "not UTF-8 text"
    assert messages.parse(b"from: tess\n", name, "agent") == "no blank line after the header"
