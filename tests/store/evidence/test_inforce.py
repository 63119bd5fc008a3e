"""store/evidence/inforce.py on what a planted record can hold: the set in force is capped as a write caps it."""

from __future__ import annotations

from rehydrate.store.evidence import inforce

SHA = "a" * 64


def test_the_set_in_force_is_capped_and_filtered() -> None:
    planted = {f"f{n}.txt": SHA for n in range(inforce.MAX_STAMPS + 500)}
    planted.update({"../secret": SHA, "/etc/passwd": SHA, "a/./b": SHA, "ok.txt": "not a hash"})
    force = inforce.in_force({"stamps": planted, "approvals": {"x": {"sha256": SHA}}})
    assert len(force["stamps"]) == inforce.MAX_STAMPS and force["approvals"] == {}
    assert not {"../secret", "/etc/passwd", "a/./b", "ok.txt"} & set(force["stamps"])
    assert inforce.in_force("not a dict") == inforce.empty()
