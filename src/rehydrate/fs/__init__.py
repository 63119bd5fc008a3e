"""The file system seam, a leaf: every byte rehydrate writes goes through `write` (the crash-test seam a test
replaces with a recorder), every file it reads through `read` (never a final symlink, never blocking, regular files
only), and a file made once, whole or not at all, through `create`. It imports nothing of rehydrate but `errors`.
"""
