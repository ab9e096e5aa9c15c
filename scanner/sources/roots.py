"""What makes a directory of a scanned tree one that is rendered whole (a Helm chart, a
kustomization root), told from its file names alone.

The walk of every scan asks it for each directory; the renderers themselves (scanner/sources/render.py,
which imports subprocess handling, the kustomization reader and the template line locator) are
imported only when a chart or a kustomization is found or named (a one-file scan, the pre-commit
case, renders nothing).
"""

from __future__ import annotations

from pathlib import Path

#: what makes a directory a Helm chart
CHART_FILE = "Chart.yaml"
#: the names kustomize looks for in a directory, in its order
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def kustomization_file(directory: Path) -> Path | None:
    """The kustomization file of `directory`, if it holds one."""
    for name in KUSTOMIZATION_FILES:
        if (directory / name).is_file():
            return directory / name
    return None
