"""The pipeline, one line per stage, and behind narrow doors what makes it fast."""
