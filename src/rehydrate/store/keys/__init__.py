"""Signed records: a key the agent does not hold in the repository, and the check that every keyed actor's log ends
in a record its key signed.

- The private key (Ed25519) is a file outside the repository: `$REHYDRATE_KEY_FILE`, else
  `$XDG_CONFIG_HOME/rehydrate/key`, else `~/.config/rehydrate/key` (mode 0600). One key serves every actor and
  repository of its user; `rehydrate key init` makes it and registers its public key for an actor: the file
  `state/keys/<actor>.pub` (committed with the state) and a `key` record, signed by it.
- An actor with a committed public key signs every record it writes: `sig = {"key": <key id>, "ed25519": <base64>}`
  over `SIG_DOMAIN` + the canonical record less `h` and `sig` (the record's `h` then covers `sig` too). The key id is
  the first 16 hex digits of the public key's sha256. Without its key readable, such an actor writes nothing
  (KeyMissing): an unsigned record would read as forged.
- The check (run by every reconciliation when `state/keys/` or this clone's trust file exists): a signature covers
  its record's `prev`, so through the hash chain every record before it: each keyed actor's last record must carry a
  valid signature of its key, and then the whole log up to it is as the key holder wrote it. A record added by hand,
  an early record edited and every later one re-sealed, a log replaced by one forged `rotate`: the last record's
  signature is missing or does not verify (`forged`). The heads already verified are remembered in this clone's
  trust file (`<git-dir>/rehydrate/<key>/keys.json`, never committed), so a read verifies only what is new (the
  crypto library is imported only then).
- Pinned on first sight, and only when the actor's own log registered the key: its `key` record, signed by it, with
  every record since signed by it too (read back through the archives the log was rotated from), for this state (a
  registration names the state's `init` record; one written before registrations did must bind this state's goal),
  and, for this clone's own actor, held in this user's key file. Otherwise nothing is pinned and the key is named:
  `key-unregistered`, `other-state`, `key-not-mine`. A key pinned for a teammate this clone knew without one is said
  once (`key-registered`). The trust file keeps each actor's key as this clone pinned it. A committed key that
  differs is named (`key-changed`) until `rehydrate key trust ACTOR`; a committed key removed while this clone knew it
  is named too (`key-removed`), and the actor's log is still checked against the key it knew.
- A message in a keyed actor's name counts only when her log holds her signed `mail` record of it (store/mail/).

What this cannot prove: that a key holder told the truth (a writer with the key can sign a lie), nor that a
registration is the actor's own where no clone of the actor's is looking (whoever can push can register a key in the
name of an actor who has none). The chain proves order, the signature authorship; neither proves truth.

sign: the key files, the public keys committed, a signature made and verified; pins: this clone's pins and the records
it verified; register: whether a committed key is its actor's own (first sight), the state a registration names, and
the key this actor signs with; refused: the keys first sight refused, remembered; check: each keyed log against its
key, the changes of key named. Each imports only those named before it.
"""
