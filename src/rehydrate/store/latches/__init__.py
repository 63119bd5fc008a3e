"""The latches: 00_goal.md, written once, and 10_invariants.md, which only grows. The write-once and append-only
checks (latch), the running hash that binds the invariants' lines (binding), those lines read as a graph of the
records that bound them (order), and 10 read as far as a brief could show it, with that read's summary cached per
clone (index).
"""
