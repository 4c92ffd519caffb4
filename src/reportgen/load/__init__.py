"""Source folder -> ValidatedSource: configuration, contracts, call logs and requests, every problem at once."""
