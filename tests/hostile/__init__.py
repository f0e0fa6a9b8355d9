"""Hostile-but-fair loopback services and MCP servers for the issue-21 tests."""
