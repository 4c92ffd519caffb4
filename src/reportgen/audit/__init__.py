"""ValidatedRun -> findings: the run checked against its contract, credentials, redaction."""
