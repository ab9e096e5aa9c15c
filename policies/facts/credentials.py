"""Plaintext credentials in an object: where they are and what type, never what they are.

    input.facts.credentials = [
        {"path": [...], "types": ["GitHub token"], "name": "GH_TOKEN" | null, "inside": null},
        # inside: a credential in kubectl's last-applied-configuration annotation, at this path of
        # the decoded object (the finding points at the annotation)
    ]

Two kinds of evidence:

- a string in a credential's published format (``FORMATS``): Azure storage keys and SAS signatures,
  Entra ID client secrets, AWS access key ids, GitHub, Hugging Face, OpenAI, Anthropic, Slack and
  Google API keys, private keys, JSON Web Tokens, bearer tokens, URLs carrying a password. The
  formats are those the issuers publish and that gitleaks, Trivy and Microsoft's security-utilities
  use;
- a value under a credential's name: a ``{name, value}`` entry (env vars, parameters) or a
  ConfigMap data key whose last word is a credential word (AZURE_CLIENT_SECRET, HF_TOKEN,
  dbPassword, api-key), with a value that is not a reference, a path or a placeholder.

Workloads are read whole (every pod spec field, annotations), ConfigMaps' data and annotations; the
last-applied-configuration annotation is decoded and read like the object. Computed here rather than
in Rego because it walks every string of the object (the policy VM has no ``walk``), the same code in
every gate; values never leave this module.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from stockade.policies.facts.inventory import Inventory
from stockade.policies.kinds.workloads import pod_template

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NAMED_VARIABLE = "value of a credential-named variable"
NAMED_KEY = "value under a credential-named key"

#: (type, pattern): a pattern matches anywhere in the string
FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (t, re.compile(p))
    for t, p in (
        ("Azure storage account key", r"AccountKey=[A-Za-z0-9+/]{86}=="),
        ("Azure storage account key", r"(?:^|[^A-Za-z0-9+/])[A-Za-z0-9+/]{76}\+ASt[A-Za-z0-9+/]{5}[AQgw]=="),
        ("Azure SAS token", r"(?i)(?:^|[?&;])sig=[0-9a-z/+%]{43,129}(?:=|%3d)"),
        (
            "Entra ID client secret",
            r"(?:^|[^A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[78]Q~[A-Za-z0-9_~.-]{31,34}(?:$|[^A-Za-z0-9_~.-])",
        ),
        (
            "AWS access key id",
            r"(?:^|[^A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}(?:$|[^A-Za-z0-9])",
        ),
        ("GitHub token", r"(?:^|[^A-Za-z0-9_])(?:ghp|gho|ghu|ghs)_[0-9A-Za-z]{36}(?:$|[^A-Za-z0-9_])"),
        ("GitHub token", r"(?:^|[^A-Za-z0-9_])ghr_[0-9A-Za-z]{36,76}(?:$|[^A-Za-z0-9_])"),
        ("GitHub token", r"(?:^|[^A-Za-z0-9_])github_pat_[0-9A-Za-z_]{82}(?:$|[^A-Za-z0-9_])"),
        ("Hugging Face token", r"(?:^|[^A-Za-z0-9_])(?:hf|api_org)_[A-Za-z0-9]{34,40}(?:$|[^A-Za-z0-9_])"),
        ("OpenAI API key", r"(?:^|[^A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"),
        ("OpenAI API key", r"(?:^|[^A-Za-z0-9_-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}"),
        ("Anthropic API key", r"(?:^|[^A-Za-z0-9_-])sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}"),
        ("Slack token", r"(?:^|[^A-Za-z0-9])xox[abposre]-[0-9A-Za-z-]{10,}"),
        ("Google API key", r"(?:^|[^A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?:$|[^A-Za-z0-9_-])"),
        ("private key", r"-{3,}\s*BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?\s*-{3,}"),
        # an Authorization header's value (a digit in it: "Bearer tokens are..." is prose)
        ("bearer token", r"(?i)(?:^|[^A-Za-z0-9])bearer\s+[A-Za-z0-9._~+/-]{3,}[0-9][A-Za-z0-9._~+/=-]*"),
        (
            "JSON Web Token",
            r"(?:^|[^A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        ),
        ("URL with a password", r"(?i)[a-z][a-z0-9+.-]*://[^:@/\s\"'$]+:[^:@/\s\"'$({<]{3,}@[^\s\"'/]+"),
    )
)

#: the formats' fixed parts (gitleaks' "keywords"): one cheap pass rules most strings out
_ANY = re.compile(
    r"AccountKey=|\+ASt|(?i:sig=)|Q~|AKIA|ASIA|ABIA|ACCA|A3T|gh[pousr]_|github_pat_|hf_|api_org_|sk-|xox|AIza"
    r"|PRIVATE KEY|(?i:bearer)|eyJ|://[^/@\s]+:[^/@\s]+@"
)

#: published example and emulator values: documented, so nobody's credential
PUBLIC_VALUES = (
    "AKIAIOSFODNN7EXAMPLE",
    # the Azurite / storage emulator's well-known devstoreaccount1 key
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
)

#: the last word of a credential's name (snake, kebab, dotted or camelCase): AZURE_CLIENT_SECRET,
#: HF_TOKEN, dbPassword, storage.account-key, AZURE_BATCH_KEY; not SECRET_NAME, TOKEN_TTL,
#: PASSWORD_FILE, CACHE_KEY (a bare "key" names too many things that are not secrets)
_NAME = re.compile(
    r"^(?:.*[_.])?(?:password|passwd|pwd|passphrase|secret|client_?secret|secret_?key|secret_?access_?key"
    r"|api_?key|apikey|access_?key|account_?key|storage_?key|private_?key|signing_?key|batch_?key|master_?key"
    r"|shared_?key|encryption_?key|key_?content|jwt|bearer|token|auth_?token|access_?token|bearer_?token"
    r"|refresh_?token|credentials?|connection_?string|conn_?str|sas_?token|sas_?url)$"
)
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
#: not a credential: references ($(VAR), ${VAR}, templates), placeholders, paths, numbers
_NOT_A_VALUE = re.compile(r"\$\(|\$\{|\{\{|^<[^>]*>$|^/|^file://|^[0-9.]+$")
_WORDS = frozenset({"true", "false", "yes", "no", "null", "none"})


def types_of(value: str) -> list[str]:
    """The credential types `value` holds by format (sorted, each once)."""
    if not _ANY.search(value):
        return []
    found = set()
    for kind, pattern in FORMATS:
        matches = [m.group(0) for m in pattern.finditer(value)]
        if matches and not all(any(p in m for p in PUBLIC_VALUES) for m in matches):
            found.add(kind)
    return sorted(found)


def sensitive_name(name: Any) -> bool:
    if not isinstance(name, str) or not name:
        return False
    return _sensitive(name)


@functools.lru_cache(maxsize=4096)
def _sensitive(name: str) -> bool:
    """Names repeat across a tree (the same variables in every workload): decided once each."""
    words = _CAMEL.sub(r"\1_\2", name).lower().replace("-", "_")
    return bool(_NAME.match(words))


def plausible(value: Any) -> bool:
    """A value that could be the credential itself."""
    if not isinstance(value, str):
        return False
    v = value.strip()
    return len(v) >= 4 and not _NOT_A_VALUE.search(v) and v.lower() not in _WORDS


def _found(node: Any, data_keys: bool) -> dict[tuple[Any, ...], tuple[set[str], str | None]]:
    """path -> (types, the credential's name where a name told), in a decoded object.

    One pre-order walk (a node before its children, children in order); the path is a list kept in
    step with the walk and copied only where something is found: every string of every object is
    visited, so the walk builds nothing for the rest."""
    out: dict[tuple[Any, ...], tuple[set[str], str | None]] = {}
    path: list[Any] = []

    def add(at: tuple[Any, ...], kinds: list[str] | set[str], name: str | None) -> None:
        entry = out.setdefault(at, (set(), None))
        entry[0].update(kinds)
        if name is not None:
            out[at] = (entry[0], name)

    search = _ANY.search

    def string(value: str, at: tuple[Any, ...]) -> None:
        """A string that may hold a credential's format (it matched _ANY) at path `at`."""
        if at[-2:] == ("annotations", LAST_APPLIED):
            return  # the last-applied annotation is decoded by facts(), and checked there
        kinds = types_of(value)
        if kinds:
            add(at, kinds, None)

    def walk(value: Any) -> None:
        # strings are checked in their parent's loop (no call for the many that match no format);
        # exact types first: decoded objects hold dicts, lists and strings, and an ABC check is slow
        if type(value) is dict or isinstance(value, Mapping):
            text = value.get("value")  # most mappings have none: checked before the name
            if isinstance(text, str) and sensitive_name(name := value.get("name")) and plausible(text):
                add((*path, "value"), {NAMED_VARIABLE}, name)
            children: Iterable[tuple[Any, Any]] = value.items()
        elif isinstance(value, list):
            children = enumerate(value)
        else:
            return
        for k, v in children:
            t = type(v)
            if t is str or (t is not dict and t is not list and isinstance(v, str)):
                if search(v):
                    string(v, (*path, k))
            elif t is dict or t is list or isinstance(v, (Mapping, list)):
                path.append(k)
                walk(v)
                path.pop()

    if isinstance(node, str):
        if search(node):
            string(node, ())
    else:
        walk(node)
    if data_keys and isinstance(node, Mapping) and isinstance(node.get("data"), Mapping):
        for key, value in node["data"].items():
            if sensitive_name(key) and plausible(value):
                add(("data", key), {NAMED_KEY}, str(key))
    return out


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.credentials` for workloads and ConfigMaps; {} for other objects."""
    configmap = obj.get("kind") == "ConfigMap"
    if not configmap and (pod if pod is not None else pod_template(obj)) is None:
        return {}
    found = _found({k: v for k, v in obj.items() if k != "status"}, configmap)
    out = [
        {"path": list(path), "types": sorted(kinds), "name": name, "inside": None}
        for path, (kinds, name) in found.items()
    ]
    md = obj.get("metadata")
    annotations = md.get("annotations") if isinstance(md, Mapping) else None
    applied = annotations.get(LAST_APPLIED) if isinstance(annotations, Mapping) else None
    if isinstance(applied, str):
        where = ["metadata", "annotations", LAST_APPLIED]
        try:
            decoded = orjson.loads(applied)
        except orjson.JSONDecodeError:
            kinds = types_of(applied)  # not JSON: checked as text
            if kinds:
                out.append({"path": where, "types": kinds, "name": None, "inside": None})
        else:
            inner = _found(decoded, isinstance(decoded, Mapping) and decoded.get("kind") == "ConfigMap")
            out += [
                {"path": where, "types": sorted(kinds), "name": name, "inside": list(path)}
                for path, (kinds, name) in inner.items()
            ]
    return {"credentials": out} if out else {}


def key_names_only(obj: dict[str, Any]) -> None:
    """Reduce a Secret to metadata, type and `dataKeys` in place: its values are dropped here."""
    keys = sorted({str(k) for field in ("data", "stringData") for k in (obj.get(field) or {})})
    for key in [k for k in obj if k not in ("kind", "apiVersion", "metadata", "type")]:
        del obj[key]
    md = obj.get("metadata")
    if isinstance(md, dict):
        md.pop("managedFields", None)
        annotations = md.get("annotations")
        if isinstance(annotations, dict):
            annotations.pop(LAST_APPLIED, None)
    obj["dataKeys"] = keys
