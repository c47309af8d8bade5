"""Platform-free core of digestbot: models, store, ingest, ranking, composition, services."""

from pathlib import Path

#: The bundled NeurIPS 2026 paper list, the embedded default corpus. It ships inside the package
#: (package-data), so a wheel or `pip install .` has it; wheels install as plain files, so a path:
#: beside this file, where importlib.resources finds it, without loading importlib.resources'
#: readers for every command.
BUNDLED_PAPERS = Path(__file__).resolve().parent / "data" / "neurips2026.txt"
