"""Channel wrappers: each adds one perception or expression channel to the base env."""
