"""One file's text to Kubernetes objects with their positions: what every reader of manifests
(files and stdin, rendered Helm charts and kustomizations) hands its text to.

A YAML stream is read through the one decoder, a JSON file as JSON; ARM templates, Resource Graph
exports and terraform plans are recognised in JSON and read as Azure resources; ``kind: List`` (and
``*List``) objects are expanded into their items; an object whose field types the API server would
refuse is an :class:`InputError` naming its first such field and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from stockade.policies.decoding.decode import TOO_DEEP, deeper_than
from stockade.policies.decoding.shape import problems
from stockade.policies.decoding.yamlpos import LazyFile, YAMLSyntaxError, iter_lazy_documents
from stockade.policies.model import InputError, JSONPath, Origin, Resource, format_path
from stockade.scanner.sources.base import Item, Skipped

_K8S_LINE = re.compile(r'^[ \t-]*"?(apiVersion|kind)"?[ \t]*:', re.M)
#: in JSON a key need not start a line: `{"apiVersion":"v1","kind":"Pod",...}` on one line
_JSON_API_VERSION = re.compile(r'"apiVersion"\s*:')
_JSON_KIND = re.compile(r'"kind"\s*:')
#: a Go template action on one line: ``{{ .Values.x }}``, ``{{- if .Foo }}``, ``{{ $k }}: {{ $v }}``
_GO_ACTION = re.compile(r"\{\{.*?\}\}")
#: how many lines before the line a YAML error names may hold the action that broke it (the parser
#: names where it noticed: the line after an ``{{- if }}`` line, or the action's own line)
_ACTION_REACH = 2


def looks_like_kubernetes(text: str, *, json_file: bool = False) -> bool:
    """Whether a file that does not parse was meant to be a manifest: both an apiVersion and a kind
    key, quoted, anywhere (a minified JSON object, in a .json or a .yaml file); in YAML, either key
    at a line's start too. A JSON file needs both: VS Code's JSONC tasks.json has `"kind": "build"`
    on a line of its own, and no apiVersion."""
    both = _JSON_API_VERSION.search(text) is not None and _JSON_KIND.search(text) is not None
    return both or (not json_file and _K8S_LINE.search(text) is not None)


#: a placeholder a script fills in before the file is YAML (``image: {IMAGE_REGISTRY}/spark:4``, the
#: spark-operator's examples): where a value starts with one, YAML reads a flow mapping and breaks
_PLACEHOLDER = re.compile(r"(?:^|:\s|-\s)\s*\{[A-Z][A-Z0-9_]*\}[^\s,}]")


def template_line(text: str, error_line: int | None) -> tuple[int, str] | None:
    """The line, and the kind, of the template text that broke a file's YAML: a Go template action
    (``{{ … }}``) or a ``{PLACEHOLDER}`` a script fills in, on the line the error names or the
    :data:`_ACTION_REACH` lines before it (anywhere when it names none). None when there is none:
    the file is broken YAML, not a template (an Argo Workflow's ``{{inputs.parameters.x}}`` in a
    string elsewhere does not excuse a syntax error)."""
    lines = text.splitlines()
    if error_line is None:
        candidates = range(len(lines))
    else:
        last = min(error_line, len(lines))
        candidates = range(max(0, last - 1 - _ACTION_REACH), last)
    for i in candidates:
        if _GO_ACTION.search(lines[i]):
            return i + 1, "go"
        if _PLACEHOLDER.search(lines[i]):
            return i + 1, "placeholder"
    return None


def parse_text(
    text: str, name: str, *, json_file: bool = False, last_key_wins: bool = False
) -> Iterator[Item]:
    """Parse one file's text into resources (and at most one error, where parsing stopped). A file
    that does not parse and does not look like a manifest (JSONC, a template) is :class:`Skipped`.
    ``last_key_wins``: YAML read as Helm reads what it renders (a key written twice takes its last
    value), for `helm template`'s output."""
    if json_file:
        from stockade.scanner.sources.iac import iac_resources, read_json  # JSON only: YAML is never IaC

        try:
            value, text = read_json(text)  # an ARM template's comments blanked: every position kept
        except orjson.JSONDecodeError as exc:
            if not looks_like_kubernetes(text, json_file=True):
                yield Skipped(
                    name,
                    "not JSON (JSONC or a template?), and not both an apiVersion and a kind key in it",
                )
            elif exc.msg == "depth limit exceeded":  # orjson's own limit (1,024), far past ours
                yield InputError(name, TOO_DEEP)
            else:
                yield InputError(name, f"invalid JSON: {exc.msg}", exc.lineno)
            return
        if deeper_than(value):
            # what the YAML decoder says too; the policy engines' encoders stop near 255 levels
            yield InputError(name, TOO_DEEP)
            return
        lazy = LazyFile(text)
        azure = iac_resources(value, name, lazy)  # ARM templates, Resource Graph exports, terraform plans
        if azure is not None:
            yield from azure
            return
        docs = value if isinstance(value, list) else [value]
        for index, doc in enumerate(docs):
            prefix: JSONPath = (index,) if isinstance(value, list) else ()
            yield from _objects(doc, Origin(file=name, document=0, prefix=prefix, locator=lazy.locator(0)))
        return
    try:
        for doc, index, line, lazy_file in iter_lazy_documents(text, last_key_wins=last_key_wins):
            origin = Origin(file=name, document=index, line=line, locator=lazy_file.locator(index))
            yield from _objects(doc, origin)
    except YAMLSyntaxError as exc:
        found = template_line(text, exc.line)
        if found is not None and found[1] == "go":
            # helm renders a chart's templates (a directory with Chart.yaml); these are another
            # program's (an operator's embedded manifests, a krew plugin, a benchmark's generator)
            yield Skipped(
                name,
                f"a Go template ({{{{ … }}}} at line {found[0]}), YAML only once rendered: "
                "scan what renders it (helm template, the program's output)",
            )
        elif found is not None:
            yield Skipped(
                name,
                f"a template ({{PLACEHOLDER}} at line {found[0]}), YAML only once a script fills it in: "
                "scan the filled-in file",
            )
        elif looks_like_kubernetes(text):
            yield InputError(name, exc.message, exc.line)
        else:
            why = f"not YAML Kubernetes reads, and no apiVersion or kind key in it ({exc.message})"
            yield Skipped(name, why)


def _objects(doc: Any, origin: Origin) -> Iterator[Item]:
    if not isinstance(doc, Mapping) or not doc.get("kind") or not doc.get("apiVersion"):
        return  # not a Kubernetes object
    kind = doc["kind"]
    items = doc.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        for i, item in enumerate(items):
            # The item's own line is resolved lazily, like every other position.
            prefix = (*origin.prefix, "items", i)
            sub = Origin(origin.file, origin.document, None, prefix, locator=origin.locator)
            if not isinstance(item, Mapping):
                yield InputError(origin.file or "-", f"items[{i}]: not an object", sub.line_of(()))
            elif item.get("kind"):
                yield _checked(dict(item), sub)
        return
    yield _checked(dict(doc), origin)


def _checked(obj: dict[str, Any], origin: Origin) -> Item:
    """The object, or an error naming the first field whose type Kubernetes would refuse."""
    found = problems(obj)
    if not found:
        return Resource(obj, origin)
    path, message = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), Mapping) else None
    what = (
        f"{obj.get('kind')}/{name}"
        if isinstance(name, str) and isinstance(obj.get("kind"), str)
        else "object"
    )
    return InputError(
        origin.file or "-", f"{what}: {format_path(path)}: {message}{more}", origin.line_of(path)
    )
