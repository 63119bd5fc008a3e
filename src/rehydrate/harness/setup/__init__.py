"""What `rehydrate install` writes and checks: each target's files and how they merge (install.py, over files.py's
safe reads and writes, settings.py's merges of JSON and TOML, rules.py's boot rule, mcp.py's MCP server), the program
the hooks run (program.py), and whether the harness will run them (trust.py)."""
