"""Mail and promises between the actors of one state folder.

A message is a file of its own, created once and never appended to: `state/mail/<to>/<ts>-<from>-<id>.md` (ts as
YYYYmmddTHHMMSSmmmZ, id `M-` and 8 hex), holding the header lines `from:`, `to:`, `kind:`, `ts:`, `id:`, `sha256:` (of
the text), a blank line and the text. `--to all` writes under `mail/all/`. The sender's log gets a `mail` record (the
proof of sending); reading appends one `read` record naming the ids to the reader's log: a message is unread until a
`read` record of the reader's log names it. Promises are `promise` records of the promiser's log.

Everything under state/mail/ arrived by git pull: a folder or file that is a symlink, a FIFO, too large or
malformed is named and skipped, never followed; the text is untrusted (the brief fences it). A message in the name of
an actor who signs her records counts only when her log holds a `mail` record of hers naming it, signed by her key
(Senders); any other is forged: named, never shown, counted or marked read as hers. On the hook path:
standard library only, one readdir per folder, headers read only for unread messages, at most MAX_READ of them.

messages: a message as a file (its name, header and text, read strictly) and the writes (`send`, `mark_read`);
senders: who vouches for a message (a keyed sender's signed `mail` record); inbox: the listing a reader sees; known:
what this actor's log says of mail and promises, through its cache; promises: the promiser's `promise` records. Each
imports only those named before it.
"""
