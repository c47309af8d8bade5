"""A person's live Zotero library: connect (key encrypted at rest), sync into `like:`, save picks."""
