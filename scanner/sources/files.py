"""Kubernetes objects from YAML/JSON files, directories and stdin, with line numbers.

A file that cannot be read or parsed becomes an :class:`InputError` naming ``path:line`` and the
other files are still read. A repository is read as it is:

- documents that are not Kubernetes objects (no ``apiVersion``/``kind``, such as a Helm
  ``values.yaml`` or ``mkdocs.yml``) are skipped; a file holding none is a :class:`Skipped` item,
  counted in the report; so is a file that is not YAML/JSON at all (JSONC, a template) unless it
  looks like a Kubernetes manifest (an ``apiVersion:`` or ``kind:`` key), which stays an error;
- a directory holding a ``Chart.yaml`` is a Helm chart: it is rendered with ``helm template`` (the
  real helm) and its findings point at the chart's template files, instead of reading its templates
  as YAML;
- a directory holding a ``kustomization.yaml`` (``.yml``, ``Kustomization``) is rendered with
  ``kubectl kustomize`` when no other kustomization of the scan builds on it (a root: each overlay;
  a base its overlays use is rendered through them, a ``kind: Component`` through the kustomizations
  that use it), and the files a kustomization of the scan composes (resources, patches, generators'
  sources) are not read on their own: a patch is not an object; nor are the files of a
  kustomization's folder it does not use (a patch not enabled), which are skipped and counted unless
  named one by one. A kustomization file named on the command line stands for its directory, and so
  does a named file the kustomization of its own directory composes (a pre-commit hook given a
  changed patch checks what the patch produces);
- FIFOs, devices and sockets are never opened (a FIFO would block the scan forever), files larger
  than :data:`~stockade.scanner.sources.base.MAX_FILE_BYTES` are not read, and terraform HCL and
  Bicep files named explicitly are "unsupported input" errors naming what to scan instead (found in
  a directory, they are :class:`Skipped` items with the same words: counted, not errors);
- ``kind: List`` (and ``*List``) objects are expanded into their items.

Listing files (:meth:`FileSource.targets`) and reading one file (:func:`read_file`) are separate so
that the scan can read files in worker processes.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from stockade.policies.model import InputError
from stockade.scanner.sources.base import Item, Skipped, Unreadable, read_text
from stockade.scanner.sources.roots import CHART_FILE, KUSTOMIZATION_FILES, kustomization_file
from stockade.scanner.sources.text import parse_text

if TYPE_CHECKING:
    from stockade.scanner.sources.render import Composition

DEFAULT_INCLUDE = ("*.yaml", "*.yml", "*.json")
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", "node_modules", ".venv", "__pycache__")
STDIN = "-"
UNUSED_BY_KUSTOMIZATION = (
    "in a kustomization's folder but not listed by it (a disabled patch, a file kept aside); "
    "name the file to scan it alone"
)
COMPONENT_ALONE = "a kustomize Component, built only by the kustomizations that use it; scan one of them"
#: Go's vendored modules (`go mod vendor` writes vendor/modules.txt): other projects' code and
#: test data (k8s.io/apimachinery's managedfields fixtures), not manifests of this repository
GO_VENDOR = ("vendor", "modules.txt")
GO_VENDOR_SKIPPED = (
    "Go modules vendored by `go mod vendor` (vendor/modules.txt): other projects' files; name it to scan it"
)
#: Inputs stockade does not read, and what to give it instead.
UNSUPPORTED = {
    ".tf": "terraform HCL: scan the JSON of `terraform show -json PLAN` instead",
    ".tfvars": "terraform variables: scan the JSON of `terraform show -json PLAN` instead",
    ".hcl": "HCL: scan the JSON of `terraform show -json PLAN` instead",
    ".bicep": "Bicep: compile it to an ARM template (`az bicep build --file F`) and scan the JSON",
    ".bicepparam": "Bicep parameters: compile the Bicep file to an ARM template and scan the JSON",
}


@dataclass(frozen=True, slots=True)
class Rendered:
    """A directory rendered whole by the real tool instead of read file by file: a Helm chart (it
    holds Chart.yaml; `helm template`) or a kustomization root (`kubectl kustomize`)."""

    directory: Path
    tool: Literal["helm", "kustomize"] = "helm"
    kubectl: str | None = None  # `--kubectl PATH` for a kustomization
    namespace: str | None = None  # `--namespace NS`: a chart's release namespace, as helm install -n


#: The name the scan pipeline knows rendered directories by.
Chart = Rendered


@dataclass(frozen=True, slots=True)
class _Kustomization:
    """A directory holding a kustomization, found by the walk or named; resolved into a root (a
    :class:`Rendered`), a base another kustomization builds on (dropped), or an unused Component."""

    directory: Path
    named: Path | None = None  # a file named on the command line that stands for it


Target = Path | Rendered | InputError | Skipped


class FileSource:
    """Reads files and directories (recursively), filtered by include/exclude globs."""

    def __init__(
        self,
        paths: Sequence[str],
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        stdin_text: str | None = None,
        kubectl: str | None = None,
        namespace: str | None = None,
    ) -> None:
        self.paths = list(paths)
        self.kubectl = kubectl
        self.namespace = namespace  # charts are rendered into it (`--namespace`)
        self.include = tuple(include) or DEFAULT_INCLUDE
        self.exclude = DEFAULT_EXCLUDE + tuple(exclude)
        self._stdin_text = stdin_text
        self.files_read = 0

    def targets(self) -> Iterator[Target]:
        """The files (and charts, kustomizations) to read, in a stable order (directories sorted);
        missing paths are errors, non-regular files are skipped."""
        found: list[Target | _Kustomization] = []
        named: set[Path] = set()  # files named one by one: read whatever their folder
        for name in self.paths:
            path = Path(name)
            if name == STDIN:
                continue
            if path.is_dir():
                if (path / CHART_FILE).is_file():
                    found.append(Rendered(path, namespace=self.namespace))
                else:
                    found.extend(self._walk(path))
            elif path.exists():
                if path.name in KUSTOMIZATION_FILES:
                    found.append(_Kustomization(path.parent, named=path))
                    continue
                found.append(_regular(path))  # a file named explicitly is read whatever its suffix
                named.add(path.resolve())
                if kustomization_file(path.parent) is not None:
                    found.append(_Kustomization(path.parent, named=path))  # if it composes the file
            else:
                found.append(InputError(name, "no such file or directory"))
        yield from self._composed(found, named)

    def _composed(self, found: list[Target | _Kustomization], named: set[Path]) -> Iterator[Target]:
        """`found` with each kustomization root rendered and the files kustomizations compose left
        out: a kustomization another one of the scan builds on is not rendered alone, and a file in a
        kustomization's folder that it does not use (a patch not enabled) is skipped unless named."""
        compositions: dict[Path, Composition | None] = {}
        for t in found:
            if isinstance(t, _Kustomization) and t.directory.resolve() not in compositions:
                compositions[t.directory.resolve()] = _composition(t.directory)
        bases: set[Path] = set()
        composed: set[Path] = set()
        charts: set[Path] = set()
        for c in compositions.values():
            if c is not None:
                bases |= c.directories
                composed |= c.files | {c.file}
                charts |= c.charts
        # folders a kustomization reads files from (its patches/): the other files there are its too
        # (kubeflow's tensorboard base lists patches/add_controller_config.yaml; the patch beside it,
        # unused, was read alone as a Deployment named "deployment")
        used_folders = {f.parent for f in composed}
        done: set[Path] = set()
        for t in found:
            if isinstance(t, Rendered) and t.tool == "helm" and t.directory.resolve() in charts:
                continue  # inflated by the kustomization's helmCharts, with its values
            if isinstance(t, Path):
                resolved = t.resolve()
                if resolved in composed:
                    continue  # read in its kustomization's render
                if resolved not in named and (
                    compositions.get(resolved.parent) is not None or resolved.parent in used_folders
                ):
                    yield Skipped(str(t), UNUSED_BY_KUSTOMIZATION)
                    continue
            if not isinstance(t, _Kustomization):
                yield t
                continue
            key = t.directory.resolve()
            c = compositions[key]
            if key in done or key in bases:
                continue  # rendered already, or built through the kustomization that uses it
            alone = t.named is not None and t.named.name not in KUSTOMIZATION_FILES
            if alone and (c is None or t.named is None or t.named.resolve() not in c.files):
                continue  # a named file its folder's kustomization does not use: read alone
            done.add(key)
            if c is not None and c.component:
                yield Skipped(str(t.named or t.directory), COMPONENT_ALONE)
            else:
                yield Rendered(t.directory, "kustomize", self.kubectl)

    def stdin_items(self) -> Iterator[Item]:
        if STDIN in self.paths:
            text = self._stdin_text if self._stdin_text is not None else sys.stdin.read()
            self.files_read += 1
            yield from parse_text(text, "<stdin>")

    def __iter__(self) -> Iterator[Item]:
        yield from self.stdin_items()
        for target in self.targets():
            if isinstance(target, InputError | Skipped):
                yield target
            elif isinstance(target, Rendered):
                yield from render_chart(target)
            else:
                self.files_read += 1
                yield from read_file(target)

    def _walk(self, root: Path) -> Iterator[Target | _Kustomization]:
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root)
            kept = []
            for d in sorted(dirnames):
                if self._excluded(d, os.path.normpath(os.path.join(rel_dir, d))):
                    continue
                sub = Path(dirpath) / d
                if (sub / CHART_FILE).is_file():
                    # rendered whole; its templates are not YAML on their own
                    yield Rendered(sub, namespace=self.namespace)
                elif d == GO_VENDOR[0] and (sub / GO_VENDOR[1]).is_file():
                    yield Skipped(str(sub), GO_VENDOR_SKIPPED)  # counted once, not walked
                else:
                    kept.append(d)
            dirnames[:] = kept
            if kustomization_file(Path(dirpath)) is not None:
                yield _Kustomization(Path(dirpath))  # its files are left out if it composes them
            for fname in sorted(filenames):
                rel = os.path.normpath(os.path.join(rel_dir, fname))
                if self._excluded(fname, rel):
                    continue
                if any(fnmatch.fnmatch(fname, p) or fnmatch.fnmatch(rel, p) for p in self.include):
                    yield _regular(Path(dirpath) / fname)
                elif why := _unsupported(fname):
                    # counted, never dropped: the scan says what it did not read and what to give it
                    yield Skipped(str(Path(dirpath) / fname), f"unsupported input: {why}")

    def _excluded(self, name: str, rel: str) -> bool:
        return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in self.exclude)


def _regular(path: Path) -> Path | Skipped | InputError:
    """The path when it is a regular file (or a link to one); FIFOs, devices and sockets are skipped."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return InputError(str(path), f"cannot read: {exc.strerror or exc}")
    if not stat.S_ISREG(mode):
        return Skipped(str(path), "not a regular file (a FIFO, a device or a socket); not opened")
    return path


def _composition(directory: Path) -> Composition | None:
    """render.composition: the renderers' module is imported only where a kustomization is found
    (a one-file scan renders nothing: sources/roots.py)."""
    from stockade.scanner.sources.render import composition

    return composition(directory)


def render_chart(target: Rendered) -> Iterator[Item]:
    """A Helm chart or a kustomization found in a scanned tree, rendered with the real `helm
    template` or `kubectl kustomize`."""
    from stockade.scanner.sources.render import HelmSource, KustomizeSource

    if target.tool == "kustomize":
        yield from KustomizeSource(str(target.directory), target.kubectl, found=True)
    else:
        yield from HelmSource(str(target.directory), found=True, namespace=target.namespace)


def failed_render(target: Rendered, items: Sequence[Item]) -> bool:
    """Whether ``items``, a kustomization's render, is its build's failure (one error for it)."""
    return target.tool == "kustomize" and any(
        isinstance(i, InputError) and i.file == str(target.directory) for i in items
    )


def bases_to_render(
    failed: Sequence[Rendered], built: Sequence[Rendered], done: set[Path]
) -> list[tuple[Rendered, Rendered]]:
    """The kustomizations the ``failed`` builds build on that nothing ``built`` builds on (directly or
    through its bases), to render on their own: a failed overlay (a remote base out of reach, a
    generator's missing file) left every object of its local bases unjudged (kubeflow/trainer:
    its runtimes, its controller and RBAC). Components are not built alone; ``done`` (resolved
    directories rendered or queued) is extended with what is returned, each base with the failed
    kustomization that led to it."""
    covered: set[Path] = set()
    todo = [t.directory.resolve() for t in built if t.tool == "kustomize"]
    while todo:
        c = _composition(todo.pop())
        for base in c.directories if c is not None else ():
            if base not in covered:
                covered.add(base)
                todo.append(base)
    out = []
    for t in failed:
        c = _composition(t.directory)
        for base in sorted(c.directories) if c is not None else ():
            if base in covered or base in done:
                continue
            done.add(base)
            own = _composition(base)
            if own is not None and not own.component:
                out.append((t, Rendered(_shown(base), "kustomize", t.kubectl)))
    return out


def same_failure(base: Item, parent: Sequence[Item]) -> bool:
    """Whether a base's build error (``base``) is the failure its failed parent's error already
    names (the parent's chain runs through the base to the same cause): one cause, one line."""
    if not isinstance(base, InputError):
        return False
    text = _BASES_NOTE.sub("", base.message)
    parts = text.split(": ", 2)
    cause = parts[-1] if len(parts) == 3 and parts[1].startswith("via ") else text.split(": ", 1)[-1]
    return any(isinstance(p, InputError) and cause in p.message for p in parent)


#: what a failed build's error adds about the kustomizations it builds on (render._unscanned)
_BASES_NOTE = re.compile(r" \((?:so )?the (?:\d+ )?kustomizations? it builds on, .*\)$")


def _shown(directory: Path) -> Path:
    """A resolved directory as the scan names paths: relative to the working directory below it."""
    try:
        return directory.relative_to(Path.cwd().resolve())
    except ValueError:
        return directory


def _unsupported(name: str) -> str | None:
    """What to scan instead of a file stockade does not read (terraform HCL, Bicep), or None."""
    return next((why for suffix, why in UNSUPPORTED.items() if name.endswith(suffix)), None)


#: why a file that parsed is skipped: neither a Kubernetes object nor an Azure resource of a type a
#: rule reads (an ARM template of other resources, a JSON settings file)
NOTHING_TO_JUDGE = "nothing to judge in it (no Kubernetes object, no Azure resource stockade reads)"


def read_file(path: Path) -> list[Item]:
    """Every object of one file, or an error saying why (and where) the file could not be read."""
    if why := _unsupported(path.name):
        return [InputError(str(path), f"unsupported input: {why}")]
    try:
        text = read_text(path)
    except Unreadable as why:
        return [InputError(str(path), str(why))]
    try:
        items = list(parse_text(text, str(path), json_file=path.suffix.lower() == ".json"))
    except RecursionError:
        return [InputError(str(path), "nested too deeply to read")]
    except Exception as exc:  # a reader's fault on this file: said, and the other files still read
        fault = f"stockade could not read it ({type(exc).__name__}); please report this file"
        return [InputError(str(path), fault)]
    return items or [Skipped(str(path), NOTHING_TO_JUDGE)]
