"""Text by subject: arXiv ids, DOIs and links as typed, LaTeX and Markdown to plain text,
characters that cannot be stored or shown, numbers and topics as typed, paper keys, hashes and
BibTeX, headlines and sentences, acronyms, passwords in URLs, text files read as UTF-8."""
