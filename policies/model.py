"""The shared vocabulary of every gate: resources, rules, violations, findings.

These are plain slotted dataclasses rather than pydantic models because millions of them can be
created during an audit; pydantic validates at the boundaries (config, AdmissionReview, report
schema) instead. Nothing here imports any other part of stockade.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

JSONPath = tuple[str | int, ...]

#: the Kubernetes versions (1.minor) stockade's semantics are written for: rbac.kubernetes_version
OLDEST_MINOR, LATEST_MINOR = 30, 35


class Severity(enum.IntEnum):
    """Ordered so that `>=` means "at least as serious"."""

    INFO = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3
    CRITICAL = 4

    @classmethod
    def parse(cls, value: str) -> Severity:
        try:
            return cls[value.strip().upper()]
        except KeyError:
            raise ValueError(
                f"unknown severity {value!r} (expected one of: {', '.join(s.label for s in cls)})"
            ) from None

    @property
    def label(self) -> str:
        return self.name.lower()


class Action(enum.Enum):
    """What a gate does with a violation: reject it, warn about it, or only record it."""

    DENY = "deny"
    WARN = "warn"
    AUDIT = "audit"

    @property
    def rank(self) -> int:
        return {"audit": 0, "warn": 1, "deny": 2}[self.value]


class Operation(enum.Enum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CONNECT = "CONNECT"
    SCAN = "SCAN"
    AUDIT = "AUDIT"


class LineLocator:
    """Resolves a JSON path inside one source document to a line number.

    Sources that know line numbers (YAML/JSON files) implement this lazily, so that the cost of
    keeping positions is only paid for the documents that actually have findings.
    """

    def line_of(self, path: JSONPath) -> int | None:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(slots=True)
class Origin:
    """Where a resource came from: a file position, or a cluster, or an Azure resource id.

    In a file, (file, document, prefix) fully determine the position: `prefix` is the path of the
    object inside its document (``("items", 3)`` for an item of a ``kind: List``), so a path inside
    the object maps to ``prefix + path`` in the document.
    """

    file: str | None = None
    document: int | None = None
    line: int | None = None
    prefix: JSONPath = ()
    cluster: str | None = None
    azure_id: str | None = None
    locator: LineLocator | None = field(default=None, repr=False, compare=False)
    #: where the document is in the file (its first line, 0-based, and its characters [start, end)),
    #: where the first parse recorded it: a process that finds lines from the file on disk then
    #: composes only this document (stockade.policies.decoding.yamlpos.Span)
    span: tuple[int, int, int] | None = field(default=None, repr=False, compare=False)

    def line_of(self, path: JSONPath) -> int | None:
        if self.locator is None:
            return self.line
        found = self.locator.line_of(self.prefix + tuple(path))
        return found if found is not None else self.line


@dataclass(slots=True)
class StaticLocator(LineLocator):
    """Lines resolved elsewhere (in a worker process), looked up by path."""

    lines: dict[JSONPath, int | None]

    def line_of(self, path: JSONPath) -> int | None:
        return self.lines.get(tuple(path))


#: what an Azure resource's property (or name) that only the deployment decides starts with: an ARM
#: template's value stockade cannot evaluate (scanner/sources/arm.py writes it; the rules and the
#: reports read it)
UNKNOWN_PREFIX = "[unknown: set by an expression stockade cannot evaluate: "
_ARM_TYPE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)+(/[A-Za-z][A-Za-z0-9]*)+$")
_K8S_API_VERSION_RE = re.compile(r"^([a-z0-9.-]+/)?v\d+((alpha|beta)\d+)?$")


def arm_type(obj: Mapping[str, Any]) -> str | None:
    """The ARM type (``Microsoft.Storage/storageAccounts``) of an Azure resource, None for Kubernetes.

    The one place that tells Azure resources from Kubernetes objects: ARM objects carry their type in
    ``type`` (their ``kind`` is e.g. ``StorageV2``) and, in templates, a date as ``apiVersion``;
    Kubernetes objects have a ``group/vN`` apiVersion (a Secret's ``type`` such as
    ``kubernetes.io/tls`` looks like an ARM type, its apiVersion does not). Sources give ARM types in
    their canonical casing, so rules' METADATA ``kinds`` match them exactly.
    """
    kind = obj.get("type")
    if not isinstance(kind, str) or not _ARM_TYPE_RE.match(kind):
        return None
    version = obj.get("apiVersion")
    if isinstance(version, str) and _K8S_API_VERSION_RE.match(version):
        return None
    return kind


def is_mapping(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """``isinstance(value, Mapping)``, decided for a dict (what decoded objects hold) without the ABC
    check, which costs the admission path about 10 µs a request over its thirty calls."""
    return type(value) is dict or isinstance(value, Mapping)


#: What the API server records in an object's metadata about how it was written, not what it says:
#: ``managedFields`` names the object's own fields (a set's members by value), often at more length
#: than the object itself.
BOOKKEEPING_METADATA = ("managedFields",)


def without_bookkeeping(value: Any, drop: Sequence[str] = ("status",)) -> Any:
    """``value`` (an object) without its top-level keys ``drop`` and its metadata's
    :data:`BOOKKEEPING_METADATA`; ``value`` itself when it holds none of them (or is no mapping).
    Nothing is copied but the mappings that lose a key."""
    if not is_mapping(value):
        return value
    md = value.get("metadata")
    lean_md = md
    if is_mapping(md) and any(k in md for k in BOOKKEEPING_METADATA):
        lean_md = {k: v for k, v in md.items() if k not in BOOKKEEPING_METADATA}
    if lean_md is md and not any(k in value for k in drop):
        return value
    out = {k: v for k, v in value.items() if k not in drop}
    if lean_md is not md and "metadata" in out:
        out["metadata"] = lean_md
    return out


@dataclass(slots=True)
class Resource:
    """One Kubernetes object (or Azure / IaC resource) plus where it came from.

    Azure resources are ARM-shaped (``id``, ``type``, ``name``, ``tags``, ``properties``): their kind is
    the ARM type, their name the ARM name, their labels the tags (so exceptions match them), and they
    have no namespace.
    """

    obj: dict[str, Any]
    origin: Origin = field(default_factory=Origin)

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion") or "")

    @property
    def kind(self) -> str:
        return arm_type(self.obj) or str(self.obj.get("kind") or "")

    @property
    def metadata(self) -> Mapping[str, Any]:
        md = self.obj.get("metadata")
        return md if is_mapping(md) else {}

    @property
    def name(self) -> str:
        if arm_type(self.obj) is not None:
            return str(self.obj.get("name") or "")
        return str(self.metadata.get("name") or self.metadata.get("generateName") or "")

    @property
    def namespace(self) -> str | None:
        ns = self.metadata.get("namespace")
        return str(ns) if ns else None

    @property
    def labels(self) -> Mapping[str, str]:
        labels = self.obj.get("tags") if arm_type(self.obj) is not None else self.metadata.get("labels")
        return labels if is_mapping(labels) else {}

    def ref(self) -> ResourceRef:
        return ResourceRef(
            api_version=self.api_version,
            kind=self.kind,
            namespace=self.namespace,
            name=self.name,
            cluster=self.origin.cluster,
        )


@dataclass(frozen=True, slots=True)
class ResourceRef:
    api_version: str
    kind: str
    namespace: str | None
    name: str
    cluster: str | None = None

    def display(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule of the library, as its METADATA annotation describes it."""

    id: str
    title: str
    description: str
    area: str
    severity: Severity
    kinds: tuple[str, ...]
    frameworks: tuple[str, ...]
    remediation: str
    package: str  # e.g. "data.stockade.pod.privileged"
    file: str
    action: Action = Action.DENY
    #: METADATA ``custom.triggers``: strings, one of which the JSON text of every input the rule can
    #: report holds (the keys it reads: ``'"hostPort"'``). An input whose text holds none is judged
    #: without the rule (``engines/library.lean_aggregates``). Empty: the rule is always evaluated.
    triggers: tuple[str, ...] = ()

    def applies_to(self, kind: str) -> bool:
        return "*" in self.kinds or kind in self.kinds


@dataclass(slots=True)
class Violation:
    """What a rule's `deny` produced for one input: message, path in the object, details."""

    rule: Rule
    msg: str
    path: JSONPath = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    #: which pod spec of the object it is about ("workerGroupSpecs[gpu]"), for objects with several
    template: str | None = None
    #: the rule could not be evaluated on this object (a Gatekeeper constraint's error): ``msg`` says
    #: why, and the gates decide it as a failure of that rule alone
    error: bool = False
    #: the rule is not evaluated by stockade (a CEL-only template): reported, as an audit, never a pass
    unevaluated: bool = False


@dataclass(frozen=True, slots=True)
class ExceptionRef:
    """The waiver that covers a finding (owner, reason, expiry), as reports show it."""

    name: str
    owner: str
    reason: str
    expires: str | None


@dataclass(slots=True)
class Finding:
    """A violation decided: enforcement action, exception status and a resolved location."""

    rule: Rule
    action: Action
    message: str
    resource: ResourceRef
    file: str | None = None
    line: int | None = None
    path: JSONPath = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    exception: ExceptionRef | None = None
    #: which pod spec of the object ("workerGroupSpecs[gpu]") when the object holds several
    template: str | None = None
    # audit: the pods this finding stands for (found on one pod, reported on its owning workload)
    replicas: int | None = None
    #: the rule could not be evaluated (Violation.error): denied in CI; the webhook's failure mode
    error: bool = False

    def subject(self) -> str:
        """What the finding is about, as people read it: ``RayCluster/ml/llm, workerGroupSpecs[gpu]``."""
        return f"{self.resource.display()}, {self.template}" if self.template else self.resource.display()

    @property
    def waived(self) -> bool:
        return self.exception is not None


@dataclass(frozen=True, slots=True)
class InputError:
    """Bad input that stopped one file or document (never the whole run)."""

    file: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


def format_path(path: Sequence[str | int]) -> str:
    """Render ("spec", "containers", 0, "image") as spec.containers[0].image."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            out.append(f".{part}" if out else part)
    return "".join(out)


def json_type_name(value: Any) -> str:
    """A JSON value's type as messages name it ("a string", "an object", ...): never the value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def namespace_info(obj: Mapping[str, Any] | None, name: str | None) -> dict[str, Any]:
    """`input.namespace` from a Namespace object when one is known, else just the name.

    `known` tells rules whether the labels are the namespace's real labels or merely unknown (a scan
    of a workload whose Namespace object is not in the scanned set).
    """
    md = obj.get("metadata") if is_mapping(obj) else None
    md = md if is_mapping(md) else {}
    return {
        "name": name,
        "labels": dict(md.get("labels") or {}),
        "annotations": dict(md.get("annotations") or {}),
        "known": obj is not None,
    }
