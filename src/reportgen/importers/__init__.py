"""Importers: logs written by evaluation harnesses (Inspect AI, lm-evaluation-harness,
HELM) become an ordinary report source that ``check`` and ``build`` accept as it is."""
