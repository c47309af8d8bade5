"""A person's own papers (BibTeX, RIS, CSV, ids) as `like:` interests."""
