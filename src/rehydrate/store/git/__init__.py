"""What the store asks git: the work tree in one `git status` (info), the bounded plumbing runner (plumb) and the
index entries git does not look at (index).
"""
