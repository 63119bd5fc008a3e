"""What `rehydrate install` writes and checks: each target's files and how they merge (install.py, over files.py's
safe reads and writes, settings.py's merges of JSON and TOML, rules.py's boot rule, mcp.py's MCP server), the program
the hooks run (program.py), and whether the harness will run them (trust.py)."""

# the set-up in a project of one's own, as `init` and the demo's end print it (the README's quickstart says the same)
NEXT_STEPS = (
    "rehydrate init --goal 'WHAT THIS WORK MUST ACHIEVE'",
    "rehydrate install claude       # or codex, gemini, cursor, copilot, qwen: the hooks and the boot rule",
    "rehydrate install --check claude   # will the harness run them? it says what to do if not",
    "git add state .claude CLAUDE.md && git commit -m 'Add rehydrate'",
    "rehydrate checkpoint --done 'WHAT' --next 'STEP'   # the agent records as it goes; the brief says how",
)
