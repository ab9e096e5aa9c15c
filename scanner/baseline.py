"""Baselines: accept today's findings once, fail only on new ones (`scan --baseline`, `--write-baseline`).

A finding is recorded by a fingerprint that survives edits elsewhere: the rule id, the object's
identity (API group, kind, namespace, name: not the version, so `v1beta1` → `v1` keeps it), the pod
spec it is about (``template``, for objects with several) and the field path, in which a list item
that has a ``name`` (a container, a volume, a port) is named rather than numbered
(``spec.template.spec.containers[name=app].securityContext``), so reordering or adding containers keeps
it. Not the file or the line (an object moved to another file, or lines added above it, stays
baselined), and not the message, which quotes values (image tags, counts, addresses) that change
without the problem changing. Findings with the same fingerprint (a rule reporting twice on one
field) are recorded once each: a baseline is a multiset, and a third one where two were accepted is
new.

The file is JSON, sorted, one entry per line, so that it diffs and merges well::

    {"version": 1, "findings": [
    {"group": "apps", "kind": "Deployment", "name": "web", "namespace": "shop", "path": "...", ...}
    ]}
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stockade.policies.model import ExceptionRef, Finding, JSONPath, Resource

BASELINE_VERSION = 1
#: the ExceptionRef name of a baselined finding: reports show it as "waived by baseline"
BASELINE_NAME = "baseline"
_FIELDS = ("rule", "group", "kind", "namespace", "name", "template", "path")
_OPTIONAL = frozenset({"namespace", "template"})


class BaselineError(ValueError):
    """A baseline file that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True, slots=True, order=True)
class Entry:
    """The fingerprint of one finding."""

    rule: str
    group: str
    kind: str
    namespace: str | None
    name: str
    template: str | None
    path: str

    def display(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        ns = f"{self.namespace}/" if self.namespace else ""
        where = f" {self.template}" if self.template else ""
        path = f" {self.path}" if self.path else ""
        return f"{self.rule} {kind}/{ns}{self.name}{where}{path}"

    def to_json(self) -> str:
        return json.dumps({k: getattr(self, k) for k in _FIELDS}, sort_keys=True, ensure_ascii=False)

    def _key(self) -> tuple[str, ...]:
        return tuple(getattr(self, k) or "" for k in _FIELDS)


def stable_path(obj: Any, path: JSONPath) -> str:
    """The field path with list items that have a name named: ``containers[name=app]``, else ``[0]``."""
    out: list[str] = []
    node = obj
    for part in path:
        if isinstance(part, int):
            item = node[part] if isinstance(node, list) and -len(node) <= part < len(node) else None
            name = item.get("name") if isinstance(item, Mapping) else None
            out.append(f"[name={name}]" if isinstance(name, str) and name else f"[{part}]")
            node = item
        else:
            out.append(f".{part}" if out else str(part))
            node = node.get(part) if isinstance(node, Mapping) else None
    return "".join(out)


def fingerprint(resource: Resource, finding: Finding) -> Entry:
    ref = finding.resource
    version = ref.api_version
    group = version.rsplit("/", 1)[0] if "/" in version else ""
    return Entry(
        rule=finding.rule.id,
        group=group,
        kind=ref.kind,
        namespace=ref.namespace,
        name=ref.name,
        template=finding.template,
        path=stable_path(resource.obj, finding.path),
    )


def dumps(entries: Counter[Entry]) -> str:
    lines = [e.to_json() for e in sorted(entries.elements(), key=Entry._key)]
    body = ",\n".join(lines)
    return (
        f'{{"version": {BASELINE_VERSION}, "findings": [\n{body}\n]}}\n'
        if lines
        else (f'{{"version": {BASELINE_VERSION}, "findings": []}}\n')
    )


def loads(text: str, source: str) -> Counter[Entry]:
    """The entries of a baseline file's text; BaselineError (one line) when it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{source}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise BaselineError(
            f'{source}: not a stockade baseline (expected {{"version": 1, "findings": [...]}})'
        )
    if data.get("version") != BASELINE_VERSION:
        raise BaselineError(
            f"{source}: baseline version {data.get('version')!r} is not supported "
            f"(expected {BASELINE_VERSION})"
        )
    out: Counter[Entry] = Counter()
    for i, item in enumerate(data["findings"]):
        if not isinstance(item, dict) or set(item) != set(_FIELDS):
            raise BaselineError(f"{source}: findings[{i}]: expected the keys {', '.join(sorted(_FIELDS))}")
        for k in _FIELDS:
            value = item[k]
            if not (isinstance(value, str) or (value is None and k in _OPTIONAL)):
                raise BaselineError(f"{source}: findings[{i}].{k}: expected a string")
        out[Entry(**item)] += 1
    return out


def load(path: Path) -> Counter[Entry]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise BaselineError(f"{path}: cannot read baseline: {why}") from None
    return loads(text, str(path))


class BaselineMatcher:
    """Applied to each object's findings as the scan decides them (after exceptions and suppressions):
    records the fingerprint of every finding no waiver covers (`seen`, what `--write-baseline` writes),
    and marks those the baseline holds as waived by it. ``accept_all``: mark every one (the run that
    writes a baseline accepts what it records)."""

    def __init__(self, baseline: Counter[Entry] | None, source: str, *, accept_all: bool = False) -> None:
        self.baseline = baseline
        self.source = source
        self.accept_all = accept_all
        self.remaining: Counter[Entry] = Counter(baseline or {})
        self.seen: Counter[Entry] = Counter()
        self.baselined = 0
        self.new = 0
        self._fresh: Counter[Entry] = Counter()
        self._ref = ExceptionRef(
            BASELINE_NAME,
            f"accepted in {source}",
            f"present when the baseline {source} was written",
            None,
        )

    def apply(self, resource: Resource, findings: Sequence[Finding]) -> list[Finding]:
        """Mark the baselined findings of `resource`, each on its own (before folding: a finding
        folded into another is recorded and matched too, so fixing the other does not make it new)."""
        for f in findings:
            if f.exception is not None:
                continue
            entry = fingerprint(resource, f)
            self.seen[entry] += 1
            if self.remaining[entry] > 0:
                self.remaining[entry] -= 1
            else:
                self._fresh[entry] += 1  # not in the baseline read (if any)
                if not self.accept_all:
                    continue
            f.exception = self._ref
        return list(findings)

    def count(self, resource: Resource, findings: Sequence[Finding]) -> None:
        """Count `resource`'s findings as the report shows them (after folding): baselined or new."""
        for f in findings:
            if f.exception is not None and f.exception is not self._ref:
                continue
            entry = fingerprint(resource, f)
            if self._fresh[entry] > 0:
                self._fresh[entry] -= 1
                self.new += 1
            if f.exception is self._ref:
                self.baselined += 1

    def fixed(self, rules: Collection[str]) -> list[Entry]:
        """Baseline entries no finding matched, of the rules that ran (`rules`): fixed, or their object
        was not scanned; the file can be refreshed with --write-baseline."""
        return sorted((e for e in self.remaining.elements() if e.rule in rules), key=Entry._key)
