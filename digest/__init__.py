"""Platform-free core of digestbot: models, store, ingest, ranking, composition, services."""

from pathlib import Path

#: The bundled NeurIPS 2026 paper list, the embedded default corpus.
BUNDLED_PAPERS = Path(__file__).resolve().parent.parent / "data" / "neurips2026.txt"
