"""Helm and Kustomize output, rendered by the real tools and read like any manifest file.

stockade does not reimplement either renderer: `helm template` and `kubectl kustomize` (or
`kustomize build`) decide what a chart or overlay produces. Findings point at source files, which
code scanning (SARIF) can place, never at lines of a rendered stream that exist nowhere:

* Helm: the template file `helm template` names in its `# Source:` comments, at line 1.
* Kustomize: the overlay is built through a wrapper kustomization (in a temporary folder) that
  references it and asks kustomize for `buildMetadata: [originAnnotations]`; each object's
  `config.kubernetes.io/origin` annotation then names the file it came from, where its document is
  looked up by kind and name (line 1 of the file when the name was changed by a prefix, a suffix or a
  patch). The annotation is removed before evaluation (the applied objects do not carry it unless the
  overlay asks for it itself). Objects a generator made (ConfigMaps, Secrets) point at the
  kustomization file that configured them; remote resources keep the overlay folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stockade.policies.model import InputError, Origin, Resource
from stockade.scanner.sources.base import Item
from stockade.scanner.sources.text import parse_text

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
        with tempfile.TemporaryDirectory(prefix="stockade-kustomize-") as wrapper:
            target = os.path.relpath(Path(self.directory).resolve(), Path(wrapper).resolve())
            Path(wrapper, "kustomization.yaml").write_text(
                f"resources:\n- {_quoted(target)}\nbuildMetadata: [originAnnotations]\n", encoding="utf-8"
            )
            fallback = f"{self.directory} (kustomize)"
            try:
                text = _run([*cmd[:-1], wrapper], self.directory)
            except RenderError:
                # the overlay's own error, in its own words (not the wrapper's paths)
                try:
                    text = _run(cmd, self.directory)
                except RenderError as exc:
                    yield InputError(self.directory, str(exc).split(": ", 1)[1])
                    return
                yield from parse_text(text, fallback)
                return
            sources: dict[Path, dict[tuple[Any, Any], list[Origin]]] = {}  # each source file read once
            for item in parse_text(text, fallback):
                if isinstance(item, Resource):
                    _to_origin(item, wrapper, self.directory, sources)
                yield item


ORIGIN_ANNOTATION = "config.kubernetes.io/origin"


def _quoted(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _to_origin(
    item: Resource, wrapper: str, directory: str, sources: dict[Path, dict[tuple[Any, Any], list[Origin]]]
) -> None:
    """Point `item` at the file its origin annotation names (relative to the wrapper), and drop it.
    `sources`: the documents of each source file read so far, by (kind, name)."""
    md = item.obj.get("metadata")
    if not isinstance(md, dict) or not isinstance(md.get("annotations"), dict):
        return
    annotations: dict[str, Any] = md["annotations"]
    origin = annotations.get(ORIGIN_ANNOTATION)
    if not isinstance(origin, str):
        return
    del annotations[ORIGIN_ANNOTATION]
    if not annotations:
        del md["annotations"]
    fields = dict(
        (k.strip(), v.strip().strip("'\""))
        for k, _, v in (line.partition(":") for line in origin.splitlines())
        if v.strip()
    )
    if "repo" in fields:
        return  # a remote resource: no local file to point at
    relative = fields.get("path") or fields.get("configuredIn")
    if not relative:
        return
    source = Path(os.path.normpath(Path(wrapper).resolve() / relative))
    if not source.is_file():
        return
    shown = os.path.relpath(source) if not Path(directory).is_absolute() else str(source)
    found = None
    if "path" in fields:
        if source not in sources:
            sources[source] = _documents(source)
        md = item.obj.get("metadata")
        name = md.get("name") if isinstance(md, Mapping) else None
        candidates = sources[source].get((item.obj.get("kind"), name), [])
        found = candidates[0] if len(candidates) == 1 else None  # none or several: renamed or ambiguous
    item.origin.file = shown
    item.origin.locator = None
    if found is None:  # no document to resolve fields in: the file's first line
        item.origin.line, item.origin.document, item.origin.prefix = 1, None, ()
    else:  # fields the overlay kept resolve to their lines in the source (read again, as any file)
        item.origin.line, item.origin.document, item.origin.prefix = found.line, found.document, found.prefix


def _documents(source: Path) -> dict[tuple[Any, Any], list[Origin]]:
    """Where each object of `source` is, by (kind, name); empty when the file cannot be read. An
    object a prefix, suffix or patch renamed is found under no name or several."""
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    out: dict[tuple[Any, Any], list[Origin]] = {}
    for item in parse_text(text, str(source)):
        if isinstance(item, Resource):
            md = item.obj.get("metadata")
            name = md.get("name") if isinstance(md, Mapping) else None
            out.setdefault((item.obj.get("kind"), name), []).append(item.origin)
    return out


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
