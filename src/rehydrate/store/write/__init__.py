"""The write path, one command at a time under the state's lock: command (a write: reconcile, append the record, redo
the views from it, write the cache; and a locked read), apply (the redo step, also run after a crash), rules (what
refuses a write, the goal a checkpoint carries, a rotate, what `status` adds) and create (`rehydrate init`). The
record itself is sealed and appended by State (state.py), the one writer of the actor's log.
"""
