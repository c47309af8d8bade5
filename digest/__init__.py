"""Platform-free core of digestbot: models, store, ingest, ranking, composition, services."""

from importlib.resources import files
from pathlib import Path

#: The bundled NeurIPS 2026 paper list, the embedded default corpus. It ships inside the package
#: (package-data), so a wheel or `pip install .` has it; wheels install as plain files, so a path.
BUNDLED_PAPERS = Path(str(files(__name__) / "data" / "neurips2026.txt"))
