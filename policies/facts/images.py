"""Which image fields of a pod spec hold image references, decided once in Python for the image rules.

    input.facts.imageReferences = {"<image text>": false | {"domain", "path", "repository", "tag",
                                                           "digest", "pinned", "valid": true}, ...}

False for a text that is no image reference; for one that is, `images.parse` of
policies/rego/lib/images.rego: the reference split into registry, repository path, tag and digest
(the image rules read each image this way; split here once, it is a lookup in every rule).

Whether it is one is `images.valid_reference`: distribution/reference's
`ParseNormalizedNamed`, the parser the kubelet calls (a bare 64-hex image id is not a name; the Docker
Hub domain and ``library/`` added the way ``splitDockerDomain`` adds them; a lower-case repository
path; then ``Parse``: the reference grammar, a repository path of at most 255 characters, a digest of a
registered algorithm with its exact length).

Why here: the Rego grammar is a handful of regular expressions, and the policy engine compiles a
pattern again on every call. That was a fifth of a Deployment's evaluation in the webhook
(docs/benchmarks.md). Python compiles each pattern once; the split itself was a tenth of a pod's
evaluation on the compiled VM. The Rego library keeps its own grammar and split, and uses them for any
image text this map does not hold (a hand-written input, a test, another engine
given the library without facts), so a verdict never depends on the map being there;
tests/policies/test_image_facts.py checks that both answer the same on distribution's test tables
and on generated references.

Image texts longer than :data:`MAX_LENGTH` are left to the Rego grammar (linear-time regular
expressions): Python's backtracking engine never sees an attacker's long string.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from stockade.policies.facts.inventory import Inventory
from stockade.policies.kinds.workloads import pod_template
from stockade.policies.model import is_mapping

#: longer image texts are decided by the Rego grammar (no valid reference comes near this)
MAX_LENGTH = 1024

_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_REMOTE_NAME = _PATH_COMPONENT + r"(?:/" + _PATH_COMPONENT + r")*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = r"(?:" + _DOMAIN_COMPONENT + r"(?:\." + _DOMAIN_COMPONENT + r")*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"

# The patterns of images.rego, anchored as there (`\Z`: Go's `$` without the multi-line flag does not
# match before a final newline; Python's does).
_REFERENCE = re.compile(
    r"^(?:" + _DOMAIN + r"/)?" + _REMOTE_NAME + r"(?::" + _TAG + r")?(?:@" + _DIGEST + r")?\Z"
)
_DOMAIN_ONLY = re.compile(r"^" + _DOMAIN + r"\Z")
_REGISTERED_DIGEST = re.compile(r"^(?:sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})\Z")
_IMAGE_ID = re.compile(r"^[a-f0-9]{64}\Z")

_FIELDS = ("initContainers", "containers", "ephemeralContainers")


def _split_digest(ref: str) -> tuple[str, str]:
    i = ref.find("@")
    return (ref[:i], ref[i + 1 :]) if i >= 0 else (ref, "")


def _split_tag(name_tag: str) -> tuple[str, str]:
    head, slash, last = name_tag.rpartition("/")
    i = last.find(":")
    if i < 0:
        return name_tag, ""
    return head + slash + last[:i], last[i + 1 :]


def _grammar_path(name: str) -> str:
    i = name.find("/")
    if i > 0 and _DOMAIN_ONLY.match(name[:i]):
        return name[i + 1 :]
    return name


def _grammar_valid(ref: str) -> bool:
    """distribution's ``Parse``."""
    if not _REFERENCE.match(ref):
        return False
    name_tag, digest = _split_digest(ref)
    name, _tag = _split_tag(name_tag)
    if len(_grammar_path(name)) > 255:
        return False
    return digest == "" or bool(_REGISTERED_DIGEST.match(digest))


def _split_domain(first: str) -> bool:
    return first == "localhost" or "." in first or ":" in first or first.lower() != first


def _library_prefixed(domain: str, rest: str) -> str:
    return "library/" + rest if domain == "docker.io" and "/" not in rest else rest


def _docker_split(ref: str) -> tuple[str, str]:
    if "/" not in ref:
        return "docker.io", "library/" + ref
    first, _, rest = ref.partition("/")
    if first != "index.docker.io" and _split_domain(first):
        return first, _library_prefixed(first, rest)
    if first == "index.docker.io":
        return "docker.io", _library_prefixed("docker.io", rest)
    return "docker.io", ref


@functools.lru_cache(maxsize=4096)
def valid_reference(ref: str) -> bool:
    """`images.valid_reference(ref)` for a string: the kubelet would pull it (ParseNormalizedNamed).
    Cached: the same images come back in request after request."""
    if _IMAGE_ID.match(ref):
        return False
    domain, remainder = _docker_split(ref)
    colon = remainder.find(":")
    remote = remainder[:colon] if colon >= 0 else remainder
    if remote.lower() != remote:
        return False
    return _grammar_valid(domain + "/" + remainder)


def _official_path(domain: str, path: str) -> str:
    """`images.official_path`: Docker Hub's one-component names live under ``library/``."""
    return _library_prefixed(_hub(domain), path) if path else path


def _hub(domain: str) -> str:
    """`images.docker_hub_domain`."""
    return "docker.io" if domain == "index.docker.io" else domain


class ParsedReference(dict[str, Any]):
    """`images.parse(ref)` of a valid reference: one object per image text (while the cache holds
    it), shared by every input that names it, where a copy per pod was made (an audit holds every
    workload's input at once; the same images recur across a cluster's workloads). Read-only, so
    that no reader changes what another input holds; pickled as a plain mapping."""

    def _read_only(self, *_args: Any, **_kwargs: Any) -> None:
        raise TypeError("a parsed image reference is shared and read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only  # type: ignore[assignment]
    __ior__ = _read_only  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (ParsedReference, (dict(self),))


@functools.lru_cache(maxsize=4096)
def _parsed(ref: str) -> ParsedReference | None:
    """`images.parse(ref)` of a valid reference; None for any other text."""
    if not valid_reference(ref):
        return None
    name_tag, digest = _split_digest(ref)
    name, tag = _split_tag(name_tag)
    i = name.find("/")
    if i > 0 and _split_domain(name[:i]):  # images.is_domain, the same test
        first = name[:i].lower()
        domain, path = _hub(first), _official_path(first, name[i + 1 :])
    else:
        domain, path = "docker.io", _official_path("docker.io", name)
    return ParsedReference(
        domain=domain,
        path=path,
        repository=domain + "/" + path,
        tag=tag,
        digest=digest,
        pinned=digest != "",
        valid=True,
    )


def reference_fact(ref: str) -> ParsedReference | Literal[False]:
    """The value of ``input.facts.imageReferences[ref]``: the parsed reference (shared), or False."""
    parsed = _parsed(ref)
    return False if parsed is None else parsed


def image_texts(pod: Mapping[str, Any]) -> Iterator[Any]:
    """Every image field of a pod spec (containers of the three lists, image volumes), as written."""
    spec = pod.get("spec")
    if not is_mapping(spec):
        return
    for field in _FIELDS:
        containers = spec.get(field)
        if isinstance(containers, list):
            for c in containers:
                if is_mapping(c):
                    yield c.get("image")
    volumes = spec.get("volumes")
    if isinstance(volumes, list):
        for v in volumes:
            image = v.get("image") if is_mapping(v) else None
            if is_mapping(image):
                yield image.get("reference")


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.imageReferences` for a pod spec; {} for objects without one."""
    if pod is None:
        pod = pod_template(obj)
    if pod is None:
        return {}
    out = {
        text: reference_fact(text)
        for text in image_texts(pod)
        if isinstance(text, str) and text and len(text) <= MAX_LENGTH
    }
    return {"imageReferences": out} if out else {}
