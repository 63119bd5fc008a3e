"""The write-ahead log, as bytes.

Each actor writes `state/wal/<actor>.jsonl`: one JSON object per line, canonical (sorted keys, no spaces, UTF-8), so
that a record's hash is reproducible. A record holds `v` (the format's version), `seq`, `ts`, `actor`, `op`, `data`
(what the operation carries: store/records.py), `views` (the sha256 of each view it moved), `prev` (the previous
record's `h`) and `h`, the sha256 of the record without `h`; a signed record adds `sig`. A record is valid only if its
line is byte for byte the canonical encoding of what it parses to: an edit, a bit flip or a torn write shows. The last
valid line is the recovery point; what follows it is a torn tail, cut by the next write.

digest: the hashes at a scan's pace; record: one record's encoding, hash, seal and strict decode, and its parents;
lines: a log read forwards, line by line; back: the tail (read backwards from the end, the recovery point, a torn tail
cut) and the checkpoint a read back stops at; scan: the whole log checked in one pass, as a graph; graph: heads and
merges; history: every record of every actor, oldest first; since: what the log holds since the last checkpoint.
Each imports only those named before it, and none of them knows who uses it but since, which gathers the evidence in
force (store/evidence/inforce.py) for the checks.
"""
