"""capconf adapter for Claude Code's real binary (see ../README.md)."""
