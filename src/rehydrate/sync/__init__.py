"""git as the transport: `rehydrate sync` (commit the state folder, integrate the upstream, push), the remote's side
of it, and what a team's clone needs. It stands above the store and uses it; the store never imports it.
"""
