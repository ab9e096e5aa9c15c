"""What the webhook refuses before it evaluates: objects too big to evaluate cheaply, and objects
the API server would not store as typed.

An evaluation's cost grows with the object: measured on the bundled library, about 0.45 ms per
container and 2 µs per JSON value (a Pod with 20,000 containers, 0.64 MiB, took about 10 s). Anyone
who may create a Pod, even with server-side dry-run, can send one. So a cheap structural check runs
first, and what exceeds its limits (``admission.max_object_values``, ``max_containers``,
``max_pod_specs``) is denied with the limit it exceeded. This is a verdict about the object, not a
failure of the webhook, so it stands with ``failure_mode: open`` too: open would otherwise mean
"allowed because expensive".

Then the object's field types are checked against Kubernetes' own types
(:func:`stockade.policies.decoding.shape.problems`). The API server decodes built-in kinds strictly
(into their Go types, before any webhook is called), so those are not walked again; but a custom
resource's pod spec (a RayCluster's, a JobSet's) is often stored as written, under a CRD schema that
preserves unknown fields: ``privileged: "true"`` as a string would pass every rule that reads
``privileged == true``. Such an object is denied, naming the field and the expected type, never the
value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from stockade.policies.config.settings import AdmissionConfig
from stockade.policies.decoding.decode import MAX_DEPTH, TOO_DEEP, deeper_than
from stockade.policies.decoding.shape import at, problems
from stockade.policies.kinds.workloads import WorkloadKinds
from stockade.policies.model import format_path

_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
#: problems listed in a denial, at most
MAX_PROBLEMS = 5


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_UID = re.compile(rb'"uid"\s*:\s*"([0-9A-Za-z._-]{1,128})"')


def values_upper_bound(body: bytes) -> int:
    """An upper bound of the JSON values in a body, from its bytes, before it is parsed; it is how
    ``admission.max_object_values`` is measured (an empty array or object counts twice).

    Parsing is where a small body gets expensive: 3 MiB of ``[[],[],...]`` become a million Python
    lists (about 100 MiB, 1.2 s). Each value but the first follows a ``,``, ``[`` or ``:``, so
    counting those bounds the values; ``:`` is not counted (keys are not values, and each member's
    value follows a ``,`` or ``{``). The raw count also sees punctuation inside strings, so only
    when it is over the limit are the strings taken out and the count made exact.
    """
    return body.count(b",") + body.count(b"[") + body.count(b"{") + 1


def exact_values_bound(body: bytes) -> int:
    """:func:`values_upper_bound` with the strings taken out (slower: only for large counts)."""
    return values_upper_bound(_STRING.sub(b'""', body))


_OLD_OBJECT = re.compile(rb'"oldObject"\s*:\s*\{')


def has_old_object(body: bytes) -> bool:
    """Whether a review body may carry an ``oldObject`` (an UPDATE): its values may then be twice
    one object's. Errs towards yes (the key inside a string counts too)."""
    return _OLD_OBJECT.search(body) is not None


#: how deep an AdmissionReview holds its object: the review, then its ``request``
_ENVELOPE_DEPTH = 2
_BRACKETS = bytes.maketrans(b"{[}]", b"(())")
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'{}[]"')
#: what :func:`nests_within` may scan: this many times the document's brackets (a manifest's
#: innermost collections, most of them, go in the first pass)
_SCANS = 8


def nests_within(body: bytes, limit: int) -> bool:
    """True when the JSON text ``body`` certainly nests collections at most ``limit`` deep, read from
    its bytes in a few passes at C speed, where walking the parsed value
    (:func:`~stockade.policies.decoding.decode.deeper_than`) visits every value in Python. False when
    it nests deeper, or when reading it so would cost more than the walk: the caller walks then.
    ``body`` must be valid JSON (it has been parsed).

    With the escaped backslashes and then the escaped quotes taken out, every ``"`` left delimits a
    string, so what lies between a string's quotes can be dropped; of the rest only the brackets
    count. Each pass then removes the innermost pairs, the collections that hold none: the number of
    passes that leaves nothing is the depth. A pass scans what is left, so a document both deep and
    wide (a thousand chains a hundred deep) would take a hundred scans of nearly all its brackets:
    past eight scans' worth the passes stop, undecided."""
    if b"\\" in body:
        body = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = body.translate(_BRACKETS, _NOT_STRUCTURE)
    brackets = structure.replace(b'""', b"")  # the strings, when none holds a bracket
    if b'"' in brackets:  # some string does: its quotes are not all side by side
        brackets = b"".join(structure.split(b'"')[::2])
    budget = _SCANS * len(brackets) + 4096
    for _ in range(limit):
        if not brackets:
            return True
        budget -= len(brackets)
        if budget < 0:
            return False
        brackets = brackets.replace(b"()", b"")
    return not brackets


def object_shallow(body: bytes) -> bool:
    """Whether the object of a review body certainly nests within :data:`MAX_DEPTH`: the body
    nests within it and the two levels of the review around the object (:func:`nests_within`).
    False says walk the object (:func:`malformed`), which the review's other fields may also nest."""
    return nests_within(body, MAX_DEPTH + _ENVELOPE_DEPTH)


def review_uid(body: bytes) -> str | None:
    """The request uid of an AdmissionReview body, without parsing it (the API server writes
    ``uid`` first in ``request``): to deny a body too costly to parse, by name."""
    m = _UID.search(body, 0, 4096)
    return m.group(1).decode() if m else None


def oversize(obj: Mapping[str, Any], limits: AdmissionConfig, kinds: WorkloadKinds) -> str | None:
    """Why the object has too many pod specs or containers to evaluate, or None. (Its JSON values
    are bounded before parsing, from the body's bytes: :func:`values_upper_bound`.)"""
    pods = kinds.pods(obj)
    if len(pods) > limits.max_pod_specs:
        n, most = len(pods), limits.max_pod_specs
        return f"the object has {n} pod specs, more than {most} (admission.max_pod_specs)"
    containers = 0
    for pod in pods:
        spec = at(obj, pod["specPath"])
        if isinstance(spec, Mapping):
            containers += sum(len(v) for k in _CONTAINER_LISTS if isinstance(v := spec.get(k), list))
    if containers > limits.max_containers:
        return (
            f"the object has {containers} containers in its pod specs, more than {limits.max_containers} "
            "(admission.max_containers)"
        )
    return None


def malformed(obj: Mapping[str, Any], kinds: WorkloadKinds, *, shallow: bool = False) -> str | None:
    """The object's field-type problems as one line (paths and expected types only), or None. The
    object is a review's, which the API server decoded: a built-in kind's types are Kubernetes' own
    by construction and are not walked again (``problems(decoded=True)``). ``shallow``: its nesting
    is known to be within :data:`MAX_DEPTH` (:func:`object_shallow`), so it is not walked for that."""
    if not shallow and deeper_than(obj):
        # as the scan's decoders say; the policy engines' encoders stop near 255 levels
        return TOO_DEEP
    found = problems(obj, kinds, decoded=True)
    if not found:
        return None
    shown = "; ".join(f"{format_path(path) or '<root>'}: {what}" for path, what in found[:MAX_PROBLEMS])
    more = f" (and {len(found) - MAX_PROBLEMS} more)" if len(found) > MAX_PROBLEMS else ""
    return f"fields of the wrong type, which Kubernetes would not decode: {shown}{more}"
