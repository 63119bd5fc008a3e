"""store/records.py: a capture as counts, whatever shape the untrusted record gives it."""

from __future__ import annotations

from rehydrate.store.records import capture_counts


def test_a_capture_is_counted_with_what_its_bound_left_out() -> None:
    capture = {"todos": {"items": ["a", "b"], "more": 1}, "edited": {"files": ["x.py"]}, "failed": [{}, {}]}
    assert capture_counts(capture) == "3 todos, 1 file edited, 2 failed commands"
    assert capture_counts({}) == "nothing captured"


def test_a_field_of_the_wrong_shape_counts_as_empty_and_an_error_is_one_line() -> None:
    wrong = {"todos": ["not", "a", "dict"], "edited": {"files": "x.py", "more": True}, "failed": "boom"}
    assert capture_counts(wrong) == "nothing captured"
    assert (
        capture_counts({"error": "no\ntranscript  here", "todos": {"items": ["a"]}})
        == "not captured: no transcript here"
    )
    assert capture_counts({"error": "x" * 500}) == "not captured: " + "x" * 200
