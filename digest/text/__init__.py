"""Text by subject: arXiv ids, LaTeX and Markdown to plain text, characters that cannot be
stored or shown, numbers as typed, paper keys and hashes, sentences, acronyms, passwords in URLs."""
