"""Helm and Kustomize output, rendered by the real tools and read like any manifest file.

stockade does not reimplement either renderer: `helm template` and `kubectl kustomize` (or
`kustomize build`) decide what a chart or overlay produces. Findings point at source files, which
code scanning (SARIF) can place, never at lines of a rendered stream that exist nowhere:

* Helm: the template file `helm template` names in its `# Source:` comments, at the line that
  writes the field or where it comes from (scanner/sources/template_lines.py). A chart
  whose dependencies its `charts/` folder lacks (not committed; `helm dependency build` needs the
  network) is rendered from a copy where an empty chart stands in for each (Helm checks them by
  name): exactly Helm's render where its values turn them off; an error names those they leave on.
* Kustomize: the overlay is built through a wrapper kustomization (in a temporary folder) that
  references it and asks kustomize for `buildMetadata: [originAnnotations]`; each object's
  `config.kubernetes.io/origin` annotation then names the file it came from, where its document is
  looked up by kind and name (renamed by a prefix or a suffix: the document whose name the built
  one holds, or the file's one document of the kind; line 1 of the file when none or several
  fit). The annotation is removed before evaluation (the applied objects do not carry it unless
  the overlay asks for it itself). Objects a generator made (ConfigMaps, Secrets) point at the
  kustomization file that configured them; remote resources, and objects without an origin, at
  the overlay's own kustomization file, line 1.

:func:`composition` reads what one kustomization builds on (the directories of its `resources`,
`bases` and `components`) and which local files it reads (resources, patches, generators' sources,
replacements, ...): the directory walk renders a kustomization no other one builds on and does not
read the files a kustomization composes on their own (a patch is not an object).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stockade.policies.decoding.decode import DecodeError, documents
from stockade.policies.model import InputError, Origin, Resource
from stockade.scanner.sources.base import Item, Unreadable, read_text
from stockade.scanner.sources.roots import CHART_FILE, kustomization_file
from stockade.scanner.sources.template_lines import Document, TemplateLocator, document_for, read_template
from stockade.scanner.sources.text import parse_text

_SOURCE_RE = re.compile(r"^# Source: (.+)$", re.M)
#: kubectl's log framing of an error: `E1128 06:05:13.063954 10226 run.go:72] "command failed" err=...`
_KLOG_RE = re.compile(r"^[EWI]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] ", re.M)


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
        detail = error_detail(proc.stderr) or f"exit code {proc.returncode}"
        raise RenderError(f"{what}: {' '.join(cmd[:2])} failed: {detail}")
    return proc.stdout


#: kustomize's deprecation warnings (`# Warning: 'bases' is deprecated. ...`), one line each
_WARNING_LINE = re.compile(r"^# Warning: .*$", re.M)
#: each level of kustomize's resource accumulation: the reference it was reading
_ACCUMULATING = re.compile(r"accumulating resources from '([^']*)'")
#: the last directory kustomize descended into; what follows it is that directory's own failure
_RECURSED = "recursed accumulation of path '"
#: characters of a renderer's error kept (its end: where the cause is; half as many of the chain)
MAX_DETAIL = 500


def error_detail(stderr: str) -> str:
    """A renderer's error as one line that ends with its cause. kubectl's log framing and
    kustomize's deprecation warnings are dropped; kustomize's nested "accumulating resources"
    chain (one level per base: each first tried as a file, then as a directory) becomes the
    references followed, ``via ../default → ../manager``, and the innermost failure (a missing
    `.env`, a remote base out of reach), which the whole chain put past any length a line keeps."""
    text = _WARNING_LINE.sub(" ", _KLOG_RE.sub(" ", stderr)).replace(os.getcwd() + os.sep, "")
    detail = " ".join(text.split()).removeprefix("Error: ").removeprefix("error: ")
    if detail.startswith('"command failed" err='):  # kubectl's structured log of the error
        detail = detail.removeprefix('"command failed" err=').strip('<>" ')
        detail = detail.removeprefix("error: ")
    refs = _ACCUMULATING.findall(detail)
    if refs:
        cause = detail
        if _RECURSED in cause:
            cause = cause.rsplit(_RECURSED, 1)[1].split("': ", 1)[-1]
        if cause.startswith("accumulating resources") or cause is detail:
            cause = cause.rsplit(f"accumulating resources from '{refs[-1]}'", 1)[-1].removeprefix(": ")
        return f"via {_tail(' → '.join(refs), MAX_DETAIL // 2)}: {_tail(cause, MAX_DETAIL)}"
    return _tail(detail, MAX_DETAIL)


def _tail(text: str, limit: int) -> str:
    """``text``, or its last ``limit`` characters after an ellipsis."""
    return text if len(text) <= limit else "… " + text[-limit:]


def kustomize_command(kubectl: str | None = None) -> list[str] | None:
    """How to build a kustomization: `--kubectl PATH`, else kubectl on PATH, else kustomize."""
    if kubectl:
        return [kubectl, "kustomize"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    return None


def _build(cmd: list[str], target: str, what: str) -> str:
    """kustomize's output for `target`; where it asks for `--enable-helm` (the kustomization, or a
    base, inflates `helmCharts`), again with it and the helm on PATH, as Argo CD and Flux build such
    trees. Only then: a kubectl older than the flag builds every other kustomization as before."""
    try:
        return _run([*cmd, target], what)
    except RenderError as exc:
        if "--enable-helm" not in str(exc):
            raise
    helm = shutil.which("helm")
    return _run([*cmd, "--enable-helm", *(["--helm-command", helm] if helm else []), target], what)


@dataclass(slots=True)
class KustomizeSource:
    directory: str
    kubectl: str | None = None  # `--kubectl PATH`; else kubectl (or kustomize) on PATH
    found: bool = False  # found in a scanned tree (a kustomization file), not named with --kustomize

    def __iter__(self) -> Iterator[Item]:
        cmd = kustomize_command(self.kubectl)
        if cmd is None:
            why = (
                "a kustomization (kustomization.yaml): rendering it needs `kubectl` (install kubectl,"
                " or give --kubectl PATH) or `kustomize` on PATH (or --exclude it)"
                if self.found
                else "--kustomize needs `kubectl` (or --kubectl PATH) or `kustomize` on PATH; neither found"
            )
            yield InputError(self.directory, why)
            return
        own = kustomization_file(Path(self.directory))
        fallback = str(own) if own is not None else f"{self.directory} (kustomize)"
        with tempfile.TemporaryDirectory(prefix="stockade-kustomize-") as wrapper:
            target = os.path.relpath(Path(self.directory).resolve(), Path(wrapper).resolve())
            Path(wrapper, "kustomization.yaml").write_text(
                f"resources:\n- {_quoted(target)}\nbuildMetadata: [originAnnotations]\n", encoding="utf-8"
            )
            try:
                text = _build(cmd, wrapper, self.directory)
            except RenderError:
                # the overlay's own error, in its own words (not the wrapper's paths)
                try:
                    text = _build(cmd, self.directory, self.directory)
                except RenderError as exc:
                    detail = str(exc).split(": ", 1)[1] + _unscanned(self.directory, alone=self.found)
                    yield InputError(self.directory, detail)
                    return
                yield from _at_line_1(parse_text(text, fallback))
                return
            for item in _at_line_1(parse_text(text, fallback)):
                if isinstance(item, Resource):
                    _to_origin(item, wrapper, self.directory)
                yield item


#: bases named in the note of a kustomization that failed to build
MAX_BASES_NAMED = 3


def _unscanned(directory: str, *, alone: bool = False) -> str:
    """What a failed build leaves unscanned, for its error: the kustomizations it builds on (half of
    Kubeflow in kubeflow/manifests' example). ``alone``: a scanned tree's kustomization, whose bases
    the scan renders without it where no kustomization that built covers them
    (``files.bases_to_render``)."""
    c = composition(Path(directory))
    if c is None or not c.directories:
        return ""
    names = sorted(os.path.relpath(d, Path(directory).resolve()) for d in c.directories)
    shown = ", ".join(names[:MAX_BASES_NAMED])
    if len(names) > MAX_BASES_NAMED:
        shown += f" and {len(names) - MAX_BASES_NAMED} more"
    what = f"the {len(names)} kustomizations" if len(names) > 1 else "the kustomization"
    if alone:
        verb, they = ("are", "they build") if len(names) > 1 else ("is", "it builds")
        return f" ({what} it builds on, {shown}, {verb} scanned without it where {they})"
    return f" (so {what} it builds on, {shown}, were not scanned: name one to scan it)"


def _at_line_1(items: Iterator[Item]) -> Iterator[Item]:
    """Objects of a rendered stream, at line 1 of the file they are attributed to (a position in the
    stream exists in no file)."""
    for item in items:
        if isinstance(item, Resource):
            _first_line(item.origin)
        yield item


def _first_line(origin: Origin) -> None:
    origin.line, origin.document, origin.prefix, origin.locator, origin.span = 1, None, (), None, None


@dataclass(frozen=True, slots=True)
class Composition:
    """What one kustomization uses, as local paths (resolved; URLs and inline patches are not)."""

    file: Path
    component: bool  # `kind: Component`: built only by the kustomizations that use it
    directories: frozenset[Path]  # the kustomizations it builds on (resources, bases, components)
    files: frozenset[Path]  # the files it reads: resources, patches, generators' sources, ...
    charts: frozenset[Path] = frozenset()  # the local charts its helmCharts inflate (chartHome/name)


#: Fields holding a list of paths (or URLs, or inline YAML for the plugin fields).
_PATH_LISTS = (
    "resources", "bases", "components", "crds", "configurations", "patchesStrategicMerge",
    "transformers", "generators", "validators",
)  # fmt: skip
#: Fields holding a list of objects with a `path` (or an inline `patch`).
_PATH_OBJECTS = ("patches", "patchesJson6902", "replacements")


def composition(directory: Path) -> Composition | None:
    """The paths `directory`'s kustomization uses; None when it has none or it does not parse (the
    build then says why)."""
    file = kustomization_file(directory)
    if file is None:
        return None
    try:
        doc = _first_document(file)
    except (Unreadable, DecodeError, ValueError):
        return None
    if not isinstance(doc, Mapping):
        return None
    named: list[str] = []
    for key in _PATH_LISTS:
        value = doc.get(key)
        if isinstance(value, list):
            named += [v for v in value if isinstance(v, str)]
    for key in _PATH_OBJECTS:
        value = doc.get(key)
        if isinstance(value, list):
            named += [v["path"] for v in value if isinstance(v, Mapping) and isinstance(v.get("path"), str)]
    openapi = doc.get("openapi")
    if isinstance(openapi, Mapping) and isinstance(openapi.get("path"), str):
        named.append(openapi["path"])
    for key in ("configMapGenerator", "secretGenerator"):
        generators = doc.get(key)
        for gen in generators if isinstance(generators, list) else ():
            if not isinstance(gen, Mapping):
                continue
            sources = [gen.get("env"), *_strings(gen.get("envs"))]
            sources += [f.split("=", 1)[-1] for f in _strings(gen.get("files"))]  # [key=]path
            named += [s for s in sources if isinstance(s, str)]
    root = directory.resolve()
    directories: set[Path] = set()
    files: set[Path] = set()
    for ref in named:
        if "\n" in ref or "://" in ref or not ref.strip():
            continue  # inline YAML or a remote resource
        path = Path(os.path.normpath(root / ref.strip()))
        if path.is_dir():
            if kustomization_file(path) is not None:
                directories.add(path.resolve())
        elif path.is_file():
            files.add(path.resolve())
    return Composition(
        file.resolve(),
        doc.get("kind") == "Component",
        frozenset(directories),
        frozenset(files),
        _helm_charts(doc, root),
    )


def _helm_charts(doc: Mapping[str, Any], root: Path) -> frozenset[Path]:
    """The chart folders a kustomization's `helmCharts` inflate: `helmGlobals.chartHome` (default
    `charts`) / name, where the folder exists (a chart with a `repo` is pulled there)."""
    charts = doc.get("helmCharts")
    if not isinstance(charts, list):
        return frozenset()
    globals_ = doc.get("helmGlobals")
    home = globals_.get("chartHome") if isinstance(globals_, Mapping) else None
    base = root / (home if isinstance(home, str) and home.strip() else "charts")
    found = set()
    for chart in charts:
        name = chart.get("name") if isinstance(chart, Mapping) else None
        if isinstance(name, str) and name.strip() and (base / name).is_dir():
            found.add(Path(os.path.normpath(base / name)).resolve())
    return frozenset(found)


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


ORIGIN_ANNOTATION = "config.kubernetes.io/origin"


def _quoted(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _to_origin(item: Resource, wrapper: str, directory: str) -> None:
    """Point `item` at the file its origin annotation names (relative to the wrapper), and drop it."""
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
        md = item.obj.get("metadata")
        name = md.get("name") if isinstance(md, Mapping) else None
        found = _written(_documents(source), item.obj.get("kind"), name)
    item.origin.file = shown
    item.origin.locator = None
    if found is None:  # no document to resolve fields in: the file's first line
        item.origin.line, item.origin.document, item.origin.prefix = 1, None, ()
    else:  # fields the overlay kept resolve to their lines in the source (read again, as any file)
        item.origin.line, item.origin.document, item.origin.prefix = found.line, found.document, found.prefix


def _written(documents: Mapping[tuple[Any, Any], list[Origin]], kind: Any, name: Any) -> Origin | None:
    """Where the source file writes the object kustomize built as ``kind``/``name``: the one document
    of that kind and name; else, renamed by a namePrefix or nameSuffix (a kubebuilder project's
    `production-stack-` on every object), the one whose name is the longest part of the built name;
    else the file's one document of that kind. None where that is not one document (two objects
    the name fits, a patch that renamed it)."""
    exact = documents.get((kind, name), [])
    if exact:
        return exact[0] if len(exact) == 1 else None
    same_kind = {n: found for (k, n), found in documents.items() if k == kind and isinstance(n, str) and n}
    if isinstance(name, str):
        parts = sorted((n for n in same_kind if n in name), key=len, reverse=True)
        if parts and (len(parts) == 1 or len(parts[0]) > len(parts[1])):
            fits = same_kind[parts[0]]
            return fits[0] if len(fits) == 1 else None
    if len(same_kind) == 1:
        (only,) = same_kind.values()
        return only[0] if len(only) == 1 else None
    return None


def _documents(source: Path) -> dict[tuple[Any, Any], list[Origin]]:
    """Where each object of `source` is, by (kind, name); empty when the file cannot be read. An
    object a prefix, suffix or patch renamed is found under no name or several. Each version of a
    file (path, size, modification time) is read once (:func:`_read_version`)."""
    try:
        stat = source.stat()
    except OSError:
        return {}
    return _read_version(source, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=512)
def _read_version(source: Path, size: int, mtime_ns: int) -> dict[tuple[Any, Any], list[Origin]]:
    """The overlays of one tree share their bases (kserve's 20 overlays read the same files again
    and again, 9 s of a 55 s scan), so what a version of a file holds is kept; its Origins are only
    read from (``_to_origin`` copies their fields)."""
    return _read_documents(source)


def _read_documents(source: Path) -> dict[tuple[Any, Any], list[Origin]]:
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
    namespace: str | None = None  # the release's namespace (`--namespace`), else helm's "default"

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
        if self.namespace:  # .Release.Namespace, which charts write into their objects
            cmd += ["--namespace", self.namespace]
        for v in self.values:
            cmd += ["--values", v]
        try:
            text = _run(cmd, self.chart)
        except RenderError as exc:
            missing = _MISSING_DEPENDENCIES.search(str(exc))
            if missing is None:
                yield InputError(self.chart, str(exc).split(": ", 1)[1])
                return
            yield from self._without([n.strip() for n in missing.group(1).split(",")], cmd, exc)
            return
        yield from split_helm_output(text, self.chart)

    def _without(self, missing: list[str], cmd: list[str], exc: RenderError) -> Iterator[Item]:
        """The chart rendered without the dependencies its `charts/` folder lacks (not vendored; `helm
        dependency build` needs the network), as Helm renders it with them where the values turn
        them off (their `condition`): such a chart lost nothing. Those the values leave on are
        not judged, and an error says so; a chart whose Chart.yaml cannot be read stays the error."""
        chart = Path(self.chart)
        try:
            meta = _first_document(chart / CHART_FILE)
            values = _values([chart / "values.yaml", *map(Path, self.values)])
        except (Unreadable, DecodeError, ValueError):
            meta = None
        deps = meta.get("dependencies") if isinstance(meta, Mapping) else None
        if not isinstance(meta, dict) or not isinstance(deps, list):
            yield InputError(self.chart, str(exc).split(": ", 1)[1])
            return
        absent = [d for d in deps if isinstance(d, Mapping) and str(d.get("name") or "") in missing]
        with tempfile.TemporaryDirectory(prefix="stockade-helm-") as tmp:
            # a copy whose charts/ holds an empty chart of each missing name: Helm checks that a
            # dependency is there by name (action.CheckDependencies), and an empty one renders nothing
            copy = Path(tmp, chart.resolve().name)
            # links copied as links: a link out of the chart (or a loop of them) is Helm's to read,
            # as in the chart itself, never followed here
            shutil.copytree(chart, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            for dep in absent:
                name = str(dep["name"])
                stub = copy / "charts" / name
                stub.mkdir(parents=True, exist_ok=True)
                (stub / CHART_FILE).write_text(
                    f"apiVersion: v2\nname: {json.dumps(name)}\nversion: 0.0.0\n", encoding="utf-8"
                )
            try:
                text = _run([*cmd[:3], str(copy), *cmd[4:]], self.chart)
            except RenderError as again:
                yield InputError(self.chart, str(again).split(": ", 1)[1])
                return
        yield from split_helm_output(text, self.chart)
        enabled = [str(d["name"]) for d in absent if _enabled(d, values)]
        if enabled:
            several = len(enabled) > 1
            what, are, them = ("dependencies", "are", "them") if several else ("dependency", "is", "it")
            yield InputError(
                self.chart,
                f"its {what} {', '.join(enabled)} {are} not in charts/ (`helm dependency build` fetches "
                f"{them}) and its values turn {them} on: rendered and judged without {them}",
            )


#: `helm template`'s error for dependencies a chart's `charts/` folder does not hold
_MISSING_DEPENDENCIES = re.compile(r"found in Chart\.yaml, but missing in charts/ directory: ([^\n]+?)\s*$")


def _values(files: Sequence[Path]) -> dict[str, Any]:
    """The chart's values.yaml with each values file merged over it (maps deeply, as Helm)."""
    out: dict[str, Any] = {}
    for file in files:
        if not file.is_file():
            continue
        doc = _first_document(file)
        if isinstance(doc, Mapping):
            out = _merged(out, doc)
    return out


def _first_document(file: Path) -> Any:
    """The first YAML document of a kustomization, Chart.yaml or values file (None for an empty one),
    read as any scanned file (:func:`base.read_text`: Unreadable, DecodeError or ValueError else)."""
    return next((value for value, _ in documents(read_text(file))), None)


def _merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        out[key] = _merged(old, value) if isinstance(old, Mapping) and isinstance(value, Mapping) else value
    return out


def _enabled(dep: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
    """Whether Helm renders a dependency with these values (chartutil ProcessDependencies): the
    first path of its `condition` that the values hold as a boolean decides; else its `tags` (any
    true turns it on, all of them false off); else it is on."""
    for path in str(dep.get("condition") or "").split(","):
        node: Any = values
        for part in path.strip().split(".") if path.strip() else ():
            node = node.get(part) if isinstance(node, Mapping) else None
        if isinstance(node, bool) and path.strip():
            return node
    given = values.get("tags")
    tags: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    named = [t for t in dep.get("tags") or () if isinstance(t, str)]
    set_tags = [tags[t] for t in named if isinstance(tags.get(t), bool)]
    if set_tags:
        return any(set_tags)
    return True


def split_helm_output(text: str, chart: str) -> Iterator[Item]:
    """Attribute each rendered document to the template named by its `# Source:` comment. Read as
    `helm install` reads it: a key a template writes twice (a label its helper already sets, a
    common chart bug) takes its last value; what Helm applies is what is judged."""
    items: list[tuple[Item, bool]] = []  # each with whether its `# Source:` names a template
    for doc in re.split(r"^---\s*$", text, flags=re.M):
        m = _SOURCE_RE.search(doc)
        # `# Source:` paths start at the chart's name (Chart.yaml `name`, not always its folder's):
        # make them paths under the chart's directory.
        name = str(Path(chart, *Path(m.group(1).strip()).parts[1:])) if m else f"{chart} (helm)"
        items += ((item, m is not None) for item in parse_text(doc, name, last_key_wins=True))
    yield from _in_templates(items)


def _in_templates(items: list[tuple[Item, bool]]) -> Iterator[Item]:
    """Each rendered object at the line of its template that writes it, and its fields' lines
    (scanner/sources/template_lines.py); line 1 where its template document cannot be told."""
    rendered: dict[tuple[str | None, Any], int] = {}  # objects of a kind each template rendered
    for item, _ in items:
        if isinstance(item, Resource):
            key = (item.origin.file, item.obj.get("kind"))
            rendered[key] = rendered.get(key, 0) + 1
    templates: dict[str, list[Document] | None] = {}
    seen: dict[tuple[str | None, Any], int] = {}
    for item, sourced in items:
        if isinstance(item, Resource):
            origin, kind = item.origin, item.obj.get("kind")
            _first_line(origin)
            ordinal = seen.get((origin.file, kind), 0)
            seen[(origin.file, kind)] = ordinal + 1
            file = origin.file
            documents = None
            if sourced and file is not None:
                if file not in templates:
                    templates[file] = read_template(Path(file))
                documents = templates[file]
            written = (
                document_for(documents, item.obj, ordinal, rendered[(file, kind)]) if documents else None
            )
            if written is not None:
                origin.locator = TemplateLocator(written, item.obj)
                origin.line = origin.locator.line_of(())
        yield item
