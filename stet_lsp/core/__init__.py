"""Everything Stet knows, free of any editor protocol: the CLI and the server both call it."""
