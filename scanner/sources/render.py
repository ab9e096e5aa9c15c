"""Helm and Kustomize output, rendered by the real tools and read like any manifest file.

stockade does not reimplement either renderer: `helm template` and `kubectl kustomize` (or
`kustomize build`) decide what a chart or overlay produces. Findings point at the template file
that `helm template` names in its `# Source:` comments, at line 1 of the rendered document, since
rendered lines do not exist in the repository.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stockade.policies.model import InputError, Resource
from stockade.scanner.sources.base import Item
from stockade.scanner.sources.files import parse_text

_SOURCE_RE = re.compile(r"^# Source: (.+)$", re.M)


class RenderError(RuntimeError):
    """The renderer is missing or failed; the message is one line."""


def _run(cmd: list[str], what: str) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300)
    except OSError as exc:
        raise RenderError(f"{what}: cannot run {cmd[0]}: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise RenderError(f"{what}: {cmd[0]} did not finish within 300 s") from None
    if proc.returncode != 0:
        detail = " ".join(proc.stderr.split())[:500] or f"exit code {proc.returncode}"
        raise RenderError(f"{what}: {' '.join(cmd[:2])} failed: {detail}")
    return proc.stdout


@dataclass(slots=True)
class KustomizeSource:
    directory: str

    def __iter__(self) -> Iterator[Item]:
        if shutil.which("kubectl"):
            cmd = ["kubectl", "kustomize", self.directory]
        elif shutil.which("kustomize"):
            cmd = ["kustomize", "build", self.directory]
        else:
            yield InputError(
                self.directory, "--kustomize needs `kubectl` or `kustomize` on PATH; neither found"
            )
            return
        try:
            text = _run(cmd, self.directory)
        except RenderError as exc:
            yield InputError(self.directory, str(exc).split(": ", 1)[1])
            return
        yield from parse_text(text, f"{self.directory} (kustomize)")


@dataclass(slots=True)
class HelmSource:
    chart: str
    values: Sequence[str] = field(default_factory=tuple)
    release: str = "stockade-scan"
    found: bool = False  # found in a scanned tree (a Chart.yaml), not named with --helm

    def __iter__(self) -> Iterator[Item]:
        if not shutil.which("helm"):
            why = (
                "a Helm chart (Chart.yaml): rendering it needs `helm` on PATH (or --exclude it)"
                if self.found
                else "--helm needs `helm` on PATH; not found"
            )
            yield InputError(self.chart, why)
            return
        cmd = ["helm", "template", self.release, self.chart]
        for v in self.values:
            cmd += ["--values", v]
        try:
            text = _run(cmd, self.chart)
        except RenderError as exc:
            yield InputError(self.chart, str(exc).split(": ", 1)[1])
            return
        yield from split_helm_output(text, self.chart)


def split_helm_output(text: str, chart: str) -> Iterator[Item]:
    """Attribute each rendered document to the template named by its `# Source:` comment."""
    for doc in re.split(r"^---\s*$", text, flags=re.M):
        m = _SOURCE_RE.search(doc)
        # `# Source:` paths start at the chart's name (Chart.yaml `name`, not always its folder's):
        # make them paths under the chart's directory.
        name = str(Path(chart, *Path(m.group(1).strip()).parts[1:])) if m else f"{chart} (helm)"
        for item in parse_text(doc, name):
            if isinstance(item, Resource):
                item.origin.line = 1
                item.origin.locator = None
            yield item
