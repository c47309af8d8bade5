"""Papers as people meet them: browse, search, similar, headlines, BibTeX."""
