"""Harness transcripts: what a session did, where it compacted, and its last turns, read from the harness's own files.

- jsonl.py: the files as JSON Lines (opened without blocking, read forwards in blocks or backwards from the end);
- model.py: what every format returns (a whole file's Session, a tail's Recent) and the Format each provides;
- formats.py: FORMATS, the formats named once (claude/, codex.py, gemini.py), and which one wrote a file;
- reader.py: a whole file (the audit's), recent.py: the tail since a time (the hook's and the capture's);
- failures.py: what a failed command's output says; delivery.py: whether a hook's brief reached the model;
  ended.py: whether a reviewer's session ended, naming a file.

A transcript is other people's input: files are opened without blocking and only when regular (a FIFO, a device or a
folder is refused with an OSError), and a record nested too deeply for the parser is a bad line, never a
RecursionError. Nothing here imports the rest of rehydrate but rehydrate.text and rehydrate.safejson; this package's
own import loads nothing (the hook path imports a format's names through it).
"""
