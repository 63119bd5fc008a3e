"""Tests against real git: repositories, branches, merges, clones of a bare remote (fixtures in conftest.py)."""
