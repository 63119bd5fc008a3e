"""store/latches/binding.py: the running hash over a file's lines, so that an append hashes only its own line."""

from __future__ import annotations

from rehydrate.store.latches import binding


def test_the_running_binding_extends_as_the_file_grows() -> None:
    data = b"# head\n\n- one\n"
    assert binding.lines_of(data).add(b"- two").text() == binding.lines_of(data + b"- two\n").text()
    unterminated = binding.lines_of(b"- one")  # a last line without its newline: the append puts one first
    assert unterminated.text().endswith(":open") and binding.Lines.parse(unterminated.text()) is not None
    assert unterminated.add(b"- two").text() == binding.lines_of(b"- one\n- two\n").text()
    assert binding.lines_of(b"a\n").text() != binding.lines_of(b"a").text() != binding.lines_of(b"a\n\n").text()
    hasher = binding.LineHasher()
    for i in range(0, len(data), 3):  # fed in pieces that cut lines anywhere
        hasher.feed(data[i : i + 3])
    assert hasher.lines().text() == binding.lines_of(data).text()
    for bad in ("lines-sha256:1:2:zz", "lines-sha256:-1:2:" + "0" * 64, "other:1:2:" + "0" * 64, 5, None):
        assert binding.Lines.parse(bad) is None
