"""The weekly picture: counts per interest and vote, drawn as a PNG."""
