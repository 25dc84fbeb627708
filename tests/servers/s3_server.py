"""Session fixture for a real server; see ../shared INFRA notes in docs/testing.md."""
