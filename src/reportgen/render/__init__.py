"""Claims, views, theme, charts, narrative and safe drawings -> {path: bytes}."""
