"""What the store asks git: the work tree in one `git status` (info), the bounded plumbing runner (plumb), the
index entries git does not look at (index) and what git carries of the state folder (share).
"""
