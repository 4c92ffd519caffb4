"""A published version read back: verify and diff."""
