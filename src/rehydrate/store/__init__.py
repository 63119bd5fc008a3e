"""Externalize: everything that writes the state (fsio is the one seam every byte goes through)."""
