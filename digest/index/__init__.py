"""The derived search state: the fitted index and the paper embeddings."""
