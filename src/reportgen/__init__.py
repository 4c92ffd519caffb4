"""reportgen: turn a pre-registered evaluation run of LLM services into a static,
versioned, auditable website."""

__version__ = "0.1.0"
