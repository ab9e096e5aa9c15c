"""Plaintext credentials in an object: where they are and what type, never what they are.

    input.facts.credentials = [
        {"path": [...], "types": ["GitHub token"], "name": "GH_TOKEN" | null, "inside": null,
         "found": [{"format": "directive", "key": "requirepass", "line": 6, "types": [...]}]},
        # found: what a configuration text at that path holds, never the values
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

Inside configuration text (ConfigMap values; env var values that are JSON or several lines), a third
(:func:`in_text`): credential-named keys of properties, .env, INI, embedded YAML and JSON, password
directives (redis ``requirepass``), with the key, format and line of each, gathered into the one entry
of the field (``found``).

Workloads are read whole (every pod spec field, annotations), ConfigMaps' data and annotations; the
last-applied-configuration annotation is decoded and read like the object. Computed here rather than
in Rego because it walks every string of the object (the policy VM has no ``walk``), the same code in
every gate; values never leave this module.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson
import re2  # type: ignore[import-untyped]

from stockade.policies.decoding.decode import DecodeError, deeper_than, documents
from stockade.policies.decoding.yamlpos import NodeLocator
from stockade.policies.facts.inventory import Inventory
from stockade.policies.kinds.api import custom_resource
from stockade.policies.kinds.workloads import pod_template
from stockade.policies.model import is_mapping, without_bookkeeping

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NAMED_VARIABLE = "value of a credential-named variable"
NAMED_KEY = "value under a credential-named key"
#: a credential-named variable whose whole value is `$NAME` or `${NAME}`: not Kubernetes' `$(NAME)`,
#: so the container would get those characters, unless the manifest is filled in before it is
#: applied (envsubst, as kubernetes-sigs/lws' guides do with HF_TOKEN; Flux's post-build
#: substitution): then the applied object holds the credential in plaintext
SUBSTITUTED = (
    "a credential-named variable's $NAME, which envsubst or Flux fills in before apply: "
    "the applied object holds the credential"
)
#: `$NAME` or `${NAME}`, the whole value
_SUBSTITUTION = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})")
DIRECTIVE = "value of a password directive"
BASIC = "HTTP basic credentials"
_NAMED = frozenset({NAMED_VARIABLE, NAMED_KEY, DIRECTIVE})

#: (type, pattern): a pattern matches anywhere in the string (compiled by :func:`_formats` when a
#: string first passes `_ANY`: most scans hold none, and compiling them all costs 2-3 ms at start-up)
FORMATS: tuple[tuple[str, str], ...] = (
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
    # an Authorization header's Basic credentials: base64 of user:password (checked by _basic)
    (BASIC, r"(?i)(?:^|[^A-Za-z0-9])basic\s+[A-Za-z0-9+/]{6,}={0,2}(?![A-Za-z0-9+/=])"),
)


@functools.cache
def _formats() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(pattern)) for kind, pattern in FORMATS)


#: the formats' fixed parts (gitleaks' "keywords"): one cheap pass rules most strings out
_ANY = re.compile(
    r"AccountKey=|\+ASt|(?i:sig=)|Q~|AKIA|ASIA|ABIA|ACCA|A3T|gh[pousr]_|github_pat_|hf_|api_org_|sk-|xox|AIza"
    r"|PRIVATE KEY|(?i:bearer|basic)|eyJ|://[^/@\s]+:[^/@\s]+@"
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
#: not a credential: references ($(VAR), ${VAR}, $VAR, templates, %(x)s and #{x} interpolation, @x@
#: filtering, %X%), encrypted or external values (Jasypt's ENC(...), vault:, ref+), placeholders
#: (<password>), paths, decimal numbers and versions (1.5, 10.0.0.1). Digits alone are a value: under
#: a credential's name, 5241590000000000 is a numeric password. A literal that is deployed is the
#: credential the server accepts, however weak: changeme, xxxxx, ******** count (a default such as
#: changeme is the first password anyone tries); only what is substituted before use does not.
_NOT_A_VALUE = re.compile(
    r"\$\(|\$\{|\{\{|%\(|#\{|^\$[A-Za-z_][A-Za-z0-9_]*$|^@[A-Za-z0-9_.-]+@$|^%[A-Za-z_][A-Za-z0-9_]*%$"
    r"|^ENC\(|^vault:|^ref\+|^<[^>]*>$|^/|^file://|^[0-9]*\.[0-9.]*$"
)
_WORDS = frozenset({"true", "false", "yes", "no", "null", "none"})


def types_of(value: str) -> list[str]:
    """The credential types `value` holds by format (sorted, each once)."""
    if not _ANY.search(value):
        return []
    found = set()
    for kind, pattern in _formats():
        matches = [m.group(0) for m in pattern.finditer(value)]
        if kind == BASIC:
            matches = [m for m in matches if _basic(m)]
        if matches and not all(any(p in m for p in PUBLIC_VALUES) for m in matches):
            found.add(kind)
    return sorted(found)


def _basic(match: str) -> bool:
    """Whether "Basic X" carries credentials: X is base64 of printable ``user:password`` (so the
    words after "basic" in prose, "basic authentication", are not)."""
    encoded = match.split()[-1]
    try:
        text = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    _user, colon, password = text.partition(":")
    return bool(colon) and bool(password) and text.isprintable()


def sensitive_name(name: Any) -> bool:
    if not isinstance(name, str) or not name:
        return False
    return _sensitive(name)


@functools.lru_cache(maxsize=4096)
def _sensitive(name: str) -> bool:
    """Names repeat across a tree (the same variables in every workload): decided once each."""
    words = _CAMEL.sub(r"\1_\2", name).lower().replace("-", "_")
    return bool(_NAME.match(words))


def _substituted(value: str) -> bool:
    """An env var value that is one `$NAME` or `${NAME}` (:data:`SUBSTITUTED`)."""
    return _SUBSTITUTION.fullmatch(value.strip()) is not None


def plausible(value: Any) -> bool:
    """A value that could be the credential itself."""
    if not isinstance(value, str):
        return False
    v = value.strip()
    return len(v) >= 4 and not _NOT_A_VALUE.search(v) and v.lower() not in _WORDS


# ---- credentials inside configuration text ----------------------------------------------------

PROPERTIES = "properties/.env"
INI = "INI"
YAML = "YAML"
JSON = "JSON"
DIRECTIVE_FORMAT = "directive"
TEXT = "text"

#: directive -> the index of the word that is its password (redis.conf: requirepass, masterauth;
#: sentinel.conf: sentinel auth-pass <master> <password>; an ACL rule "user <name> ... >password" is
#: handled apart).
#: nginx's auth_basic_user_file names a file of hashes (a path, like a mounted Secret): not one.
_DIRECTIVES = {"requirepass": 1, "masterauth": 1, "sentinel auth-pass": 3}
#: a text is read for names only when it names something a credential could be under
_HINT = re.compile(r"(?i)pass|pwd|secret|token|key|cred|auth|jwt|bearer|conn|sas|^\s*user\s", re.MULTILINE)
#: file names whose text is a program, not configuration: only credential formats are looked for
_CODE = frozenset(
    {
        *("py", "sh", "bash", "zsh", "ps1", "js", "mjs", "ts", "rb", "pl", "lua", "go", "java"),
        *("groovy", "kt", "scala", "php", "sql", "html", "htm", "md", "rst", "txt", "tpl", "j2"),
        *("jinja", "gotmpl"),
    }
)
#: file names whose text is line-based configuration (never read as YAML)
_LINES = frozenset({"properties", "env", "ini", "conf", "cfg", "cnf"})
#: a YAML mapping key at a line's start: worth decoding the text as YAML
_YAML_KEY = re.compile(r"^\s*(?:- )?[\"']?[A-Za-z0-9_.-]+[\"']?:(?:\s|$)", re.MULTILINE)
#: YAML texts longer than this are read line by line only (decoding a large text costs)
MAX_YAML = 256 * 1024
_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*([=:])\s*(.*)$")
_SECTION = re.compile(r"^\[([^\]\s][^\]]{0,99})\]$")
_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_HEADERS = frozenset({"authorization", "proxy-authorization"})
#: a key segment printable as .name
_PLAIN_SEGMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def _scalar_text(value: Any) -> str | None:
    """A decoded scalar as the text a program reads: strings, and integers (a YAML ``password: 1234``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _unquote(value: str) -> str:
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    return v


def _key_path(path: Iterable[Any]) -> str:
    """A path inside a decoded text, as data["x"] paths are printed: a.b[0]["c d"]. A segment that is
    long or holds a credential's format is replaced by …"""
    out = []
    for i, part in enumerate(path):
        if isinstance(part, int):
            out.append(f"[{part}]")
            continue
        text = str(part)
        if len(text) > 64 or types_of(text):
            text = "…"
        if _PLAIN_SEGMENT.match(text) or text == "…":
            out.append(text if i == 0 else f".{text}")
        else:
            out.append(f"[{orjson.dumps(text).decode()}]")
    return "".join(out)


class _Entries:
    """What a text holds, one entry per (line, key): {"format", "key", "line", "types"}."""

    def __init__(self) -> None:
        self.by: dict[tuple[int | None, str | None], dict[str, Any]] = {}

    def add(
        self, fmt: str, key: str | None, line: int | None, kinds: Iterable[str], value: str | None
    ) -> None:
        if key is not None and ((value is not None and value.strip() in key) or types_of(key)):
            key = "…"  # the key would show the value, or holds a credential itself: never printed
        entry = self.by.get((line, key))
        if entry is None and key is None and line is not None:
            # a format found on a line that already has an entry (password: <a token>): one entry
            entry = next((e for (at, _), e in self.by.items() if at == line), None)
        if entry is None:
            entry = self.by[(line, key)] = {"format": fmt, "key": key, "line": line, "types": []}
        entry["types"] = sorted({*entry["types"], *kinds})

    def list(self) -> list[dict[str, Any]]:
        return sorted(self.by.values(), key=lambda e: (e["line"] or 0, e["key"] or ""))


def in_text(text: str, name: str | None = None) -> list[dict[str, Any]]:
    """The credentials inside a configuration text (a ConfigMap value named `name`, an env var's
    value): one entry per credential, ``{"format", "key", "line", "types"}`` with the key (or
    directive) it is under and its 1-based line in the text; never the value.

    Formats: JSON (orjson) and YAML (the one decoder) documents, walked for credential-named keys
    and ``{name, value}`` pairs; otherwise line by line: ``key=value`` / ``key: value``
    (properties, .env, ``export K=V``), INI (``[section]`` then ``key = value``), password directives
    (``requirepass X``, ``masterauth X``, ``sentinel auth-pass M X``, ACL ``user U ... >X``). On every
    line, the credential formats of :data:`FORMATS` (URLs with a password, Authorization headers,
    tokens). A name counts by :func:`sensitive_name` and a value by :func:`plausible`, as everywhere
    else. Programs (a ``.py``, ``.sh``... key, a ``#!`` line) are read for formats only."""
    if not isinstance(text, str) or not text.strip():
        return []
    hinted = _HINT.search(text) is not None
    formats = _ANY.search(text) is not None
    if not hinted and not formats:
        return []
    ext = name.rsplit(".", 1)[-1].lower() if name and "." in name else ""
    code = ext in _CODE or text.lstrip().startswith("#!")
    entries = _Entries()
    lines = text.splitlines()
    structured: str | None = None
    if hinted and not code:
        structured = _structured(text, ext, entries)
    if structured is None and not code:
        _lines(lines, entries, hinted, formats)
    elif formats:
        fmt = structured or TEXT
        for number, line in enumerate(lines, 1):
            if _ANY.search(line) and (kinds := types_of(line)):
                entries.add(fmt, None, number, kinds, None)
    on_a_line = any(e["line"] is not None for e in entries.by.values() if set(e["types"]) - _NAMED)
    if formats and not on_a_line and (kinds := types_of(text)):  # a format across lines
        entries.add(structured or TEXT, None, None, kinds, None)
    return entries.list()


def _structured(text: str, ext: str, entries: _Entries) -> str | None:
    """Read `text` as JSON or YAML documents holding mappings or lists: the format, or None."""
    docs: list[Any] = []
    nodes: list[Any] = []
    fmt = YAML
    if text.lstrip()[:1] in "{[":
        try:
            docs, fmt = [orjson.loads(text)], JSON
        except orjson.JSONDecodeError:
            docs = []
    if not docs and ext not in _LINES and len(text) <= MAX_YAML and _YAML_KEY.search(text):
        try:
            pairs = list(documents(text))
        except (DecodeError, RecursionError):
            pairs = []
        docs, nodes = [v for v, _ in pairs], [n for _, n in pairs]
    if not any(isinstance(d, (Mapping, list)) and not deeper_than(d) for d in docs):
        return None
    one_line = "\n" not in text.strip()
    if fmt == JSON and not one_line and len(text) <= MAX_YAML:
        probe = _Entries()
        _walk_text(docs[0], None, fmt, probe, [], None)
        if probe.by:  # JSON is YAML: the one decoder gives the lines, read only when needed
            try:
                nodes = [n for _, n in documents(text)]
            except (DecodeError, RecursionError):
                nodes = []
    for i, doc in enumerate(docs):
        if isinstance(doc, (Mapping, list)) and not deeper_than(doc):
            node = nodes[i] if i < len(nodes) else None
            locator = NodeLocator(node) if node is not None else None
            _walk_text(doc, locator, fmt, entries, [], 1 if one_line else None)
    return fmt


def _walk_text(
    node: Any, locator: NodeLocator | None, fmt: str, entries: _Entries, path: list[Any], line: int | None
) -> None:
    """Credential-named keys, {name, value} pairs and credential formats in a decoded document;
    `line` is every entry's line when there is no `locator` (a one-line text)."""

    def add(at: list[Any], value: str) -> None:
        at_line = locator.line_of(tuple(at)) if locator is not None else line
        entries.add(fmt, _key_path(at), at_line, [NAMED_KEY], value)

    if isinstance(node, Mapping):
        pair = _scalar_text(node.get("value"))
        if pair is not None and sensitive_name(node.get("name")) and plausible(pair):
            add([*path, "value"], pair)
        children: Iterable[tuple[Any, Any]] = node.items()
    elif isinstance(node, list):
        children = enumerate(node)
    else:
        return
    for k, v in children:
        if isinstance(v, (Mapping, list)):
            _walk_text(v, locator, fmt, entries, [*path, k], line)
        else:
            value = _scalar_text(v)
            if value is not None and sensitive_name(k) and plausible(value):
                add([*path, k], value)
            elif isinstance(v, str) and _ANY.search(v) and (kinds := types_of(v)):
                at_line = locator.line_of((*path, k)) if locator is not None else line
                entries.add(fmt, _key_path([*path, k]), at_line, kinds, None)


def _lines(lines: list[str], entries: _Entries, names: bool, formats: bool) -> None:
    """properties/.env, INI and directive lines: credential-named keys and password directives
    (when `names`), and credential formats on any line, comments too (when `formats`)."""
    section: str | None = None
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if formats and _ANY.search(line) and (kinds := types_of(line)):
            key, fmt, rest = _line_key(line)
            if key is not None and not set(kinds) <= set(types_of(rest)):
                key = None  # the credential is not (only) after the key: the key may be part of it
            if key is not None and fmt == PROPERTIES and section is not None:
                key, fmt = f"[{section}] {key}", INI
            entries.add(fmt, key, number, kinds, None)
        if not names or not line or line[0] in "#;!" or line.startswith("//"):
            continue
        if (m := _SECTION.match(line)) is not None:
            section = m.group(1).strip()
            continue
        words = line.split()
        first = words[0].lower()
        two = " ".join(words[:2]).lower()
        directive, at = (two, _DIRECTIVES[two]) if two in _DIRECTIVES else (first, _DIRECTIVES.get(first))
        if at is not None and len(words) > at:
            value = _unquote(words[at])
            if plausible(value):
                entries.add(DIRECTIVE_FORMAT, directive, number, [DIRECTIVE], value)
            continue
        if first == "user" and len(words) > 2:
            # a redis ACL rule: >password adds a password (#hash a hash, nopass none)
            if any(plausible(w[1:]) for w in words[2:] if w.startswith(">")):
                entries.add(DIRECTIVE_FORMAT, f"user {words[1]}", number, [DIRECTIVE], None)
            continue
        if (m := _ASSIGN.match(line)) is None:
            continue
        key, value = m.group(1), m.group(3)
        quoted = value[:1] in ("'", '"')
        if not quoted:
            value = re.split(r"\s[#;]", value, maxsplit=1)[0]
        value = _unquote(value)
        if sensitive_name(key) and plausible(value):
            fmt, label = (INI, f"[{section}] {key}") if section is not None else (PROPERTIES, key)
            entries.add(fmt, label, number, [NAMED_KEY], value)


def _line_key(line: str) -> tuple[str | None, str, str]:
    """(key, format, the text after the key) of a line holding a credential's format: its
    assignment's key, or its directive (with the header it sets: proxy_set_header Authorization)."""
    if (m := _ASSIGN.match(line)) is not None and not m.group(3).startswith("//"):
        return m.group(1), PROPERTIES, m.group(3)
    words = line.split()
    if len(words) > 1 and _WORD.match(words[0]):
        header = words[1].strip("\"':")
        if header.lower() in _HEADERS:
            return f"{words[0]} {header}", DIRECTIVE_FORMAT, line.split(words[1], 1)[1]
        return words[0], DIRECTIVE_FORMAT, line[len(words[0]) :]
    return None, TEXT, ""


class _Hit:
    """What one field holds: credential types, the name that told (if one did), and what was found
    inside its text (:func:`in_text` entries)."""

    __slots__ = ("found", "name", "types")

    def __init__(self) -> None:
        self.types: set[str] = set()
        self.name: str | None = None
        self.found: list[dict[str, Any]] = []

    def entry(self, path: list[Any], inside: list[Any] | None = None) -> dict[str, Any]:
        return {
            "path": path,
            "types": sorted(self.types),
            "name": self.name,
            "inside": inside,
            "found": self.found,
        }


def _config_text(value: str) -> bool:
    """Whether an env var's value is configuration text worth reading (JSON, several lines):
    SPRING_APPLICATION_JSON, a config file passed in a variable."""
    return "\n" in value.strip() or value.lstrip()[:1] == "{"


#: decoded scalars that are not text: nothing to look into
_SCALARS = frozenset({int, float, bool, type(None)})


#: :data:`_ANY` in RE2, run once over an object's JSON text: linear, about 5 µs for a 4 KB
#: workload, where Python's engine takes 0.5 µs per string (90 strings in such a workload)
_ANY_TEXT = re2.compile(_ANY.pattern.encode())


#: :data:`_HINT` or :data:`_ANY` in RE2, over many ASCII texts joined by newlines: a superset of
#: where either matches in Python (whitespace spelled out as Python's ``\s`` reads it in ASCII;
#: RE2's ``\s`` is narrower)
_HINT_OR_ANY_TEXT = re2.compile(
    r"(?im:pass|pwd|secret|token|key|cred|auth|jwt|bearer|conn|sas"
    r"|^[\t\n\x0b\x0c\r\x1c-\x1f ]*user[\t\n\x0b\x0c\r\x1c-\x1f ])|" + _ANY.pattern
)
#: what a lower-cased name :func:`sensitive_name` accepts must contain: the last word of each of
#: :data:`_NAME`'s names (``str`` for ``conn_str`` and ``connection_string``)
_NAME_STEMS = re2.compile("pass|pwd|secret|key|content|jwt|bearer|token|credential|str|url")
#: ConfigMap data entries past which the names and values are sifted together first
MANY_ENTRIES = 256


def _candidates(texts: list[str], pattern: Any, *, lower: bool = False) -> set[int] | None:
    """The indices of ``texts`` (lower-cased first with ``lower``) that ``pattern`` may match, from
    one search over them all joined by newlines (each match marks every text it overlaps); None
    (every one) for non-ASCII text."""
    joined = "\n".join(texts)
    if not joined.isascii():
        return None
    if lower:
        joined = joined.lower()  # in ASCII, the lengths stay
    found: set[int] = set()
    starts: list[int] | None = None
    for match in pattern.finditer(joined):
        if starts is None:
            starts = list(itertools.accumulate((len(t) + 1 for t in texts), initial=0))
        first = bisect.bisect_right(starts, match.start()) - 1
        last = bisect.bisect_right(starts, max(match.end() - 1, match.start())) - 1
        found.update(range(first, last + 1))
    return found


def _strings(values: list[Any]) -> list[str]:
    """``values`` with anything but a string as "" (a list of strings as it is)."""
    if all(type(v) is str for v in values):
        return values
    return [v if isinstance(v, str) else "" for v in values]


def _no_format(text: str) -> None:
    return None


#: :data:`_ANY`, or a string that starts with "{" after spaces, in compact JSON text
_ANY_OR_BRACE_TEXT = re2.compile(_ANY.pattern.encode() + rb'|"[ ]*\{')
#: in compact JSON text, the string value of a "name" key (one without escapes); Python's engine,
#: whose findall is 10 times the RE2 wrapper's speed (the pattern matches in linear time)
_NAME_VALUE = re.compile(rb'"name":"([^"\\]*)"')
#: :data:`_ANY_OR_BRACE_TEXT`, or a "name" key's string (one without escapes) holding one of
#: :data:`_NAME_STEMS` in any case: where this does not match, neither can a credential's name
_ANY_BRACE_OR_STEM_TEXT = re2.compile(
    _ANY.pattern.encode() + rb'|"[ ]*\{|"name":"[^"\\]*(?i:' + _NAME_STEMS.pattern.encode() + rb")"
)


def _possible(obj: Mapping[str, Any]) -> tuple[bool, bool]:
    """What the walk of ``obj`` can find, from its JSON text written once: (a string may hold a
    credential's format, a ``{name, value}`` mapping may hold a credential). False only when the
    text shows it cannot.

    Formats: the text does not match :data:`_ANY`. In ASCII text the two engines agree on the
    pattern, and JSON escaping keeps every character the pattern names (it only writes other
    characters differently, which can make the text match where a string does not, never the
    reverse). Non-ASCII text, where Python's case-insensitive matching goes beyond RE2's (the long
    s, U+017F, for ``s``), or a value JSON cannot write: possible.

    Names: no "name" string is a credential's name (:func:`sensitive_name`) and no string is
    configuration text (:func:`_config_text`: several lines, or a leading "{"). Read only from
    ASCII text without a backslash: every string is then written as it is, so none holds a newline
    or another control character (JSON escapes them), each "name" key's string is one match of
    :data:`_NAME_VALUE`, and a string that starts with "{" after whitespace (spaces: the rest would
    be escaped) matches ``"[ ]*{``. Most workloads are decided by one search of the text
    (:data:`_ANY_BRACE_OR_STEM_TEXT`): no format, no leading "{" and no "name" string holding one of
    :data:`_NAME_STEMS`, which every name :func:`sensitive_name` accepts holds (lower-cased; its
    camelCase and "-" splitting only add "_", which no stem holds)."""
    try:
        text = orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return True, True
    if not text.isascii():
        return True, True
    if _ANY_BRACE_OR_STEM_TEXT.search(text) is None:  # one pass for most workloads
        return False, b"\\" in text
    if _ANY_OR_BRACE_TEXT.search(text) is not None:  # one of the two: which, only when it matters
        return _ANY_TEXT.search(text) is not None, True
    if b"\\" in text:
        return False, True
    return False, any(_sensitive(name.decode()) for name in _NAME_VALUE.findall(text) if name)


def _found(node: Any, data_keys: bool, *, prefilter: bool = False) -> dict[tuple[Any, ...], _Hit]:
    """path -> what was found there, in a decoded object.

    One pre-order walk (a node before its children, children in order); the path is a list kept in
    step with the walk and copied only where something is found: every string of every object is
    visited, so the walk builds nothing for the rest. ConfigMap data values and env var values that
    are configuration text are read by :func:`in_text`. With ``prefilter``, the strings are not
    searched one by one when :func:`_possible` says none can hold a format, and nothing is walked
    when it says no ``{name, value}`` can hold a credential either (ConfigMap data aside)."""
    out: dict[tuple[Any, ...], _Hit] = {}
    path: list[Any] = []

    def add(
        at: tuple[Any, ...],
        kinds: Iterable[str],
        name: str | None,
        inside: Iterable[dict[str, Any]] = (),
    ) -> None:
        hit = out.get(at)
        if hit is None:
            hit = out[at] = _Hit()
        hit.types.update(kinds)
        if name is not None:
            hit.name = name
        hit.found.extend(inside)

    def text(at: tuple[Any, ...], value: str, key: str | None) -> None:
        inside = in_text(value, key)
        if inside:
            add(at, {t for e in inside for t in e["types"]}, None, inside)

    search: Callable[[str], Any] = _ANY.search
    if prefilter:
        formats, names = _possible(node)
        if not formats:
            search = _no_format
            if not names and not data_keys:
                return out  # no string holds a format and no {name, value} can: nothing to walk

    def string(value: str, at: tuple[Any, ...]) -> None:
        """A string that may hold a credential's format (it matched _ANY) at path `at`."""
        if at[-2:] == ("annotations", LAST_APPLIED):
            return  # the last-applied annotation is decoded by facts(), and checked there
        kinds = types_of(value)
        if kinds:
            add(at, kinds, None)

    def walk(value: Any) -> None:
        # strings are checked in their parent's loop (no call for the many that match no format);
        # exact types first: decoded objects hold dicts, lists, strings, numbers, booleans and null,
        # and an ABC check (Mapping) is slow: it is made only for a type none of those is
        t = type(value)
        if t is dict or (t is not list and isinstance(value, Mapping)):
            text_value = value.get("value")  # most mappings have none: checked before the name
            if isinstance(text_value, str):
                if sensitive_name(name := value.get("name")) and plausible(text_value):
                    add((*path, "value"), {NAMED_VARIABLE}, name)
                elif path[-2:-1] == ["env"] and _substituted(text_value) and sensitive_name(name):
                    add((*path, "value"), {SUBSTITUTED}, name)
                elif isinstance(name, str) and _config_text(text_value):
                    text((*path, "value"), text_value, None)
            children: Iterable[tuple[Any, Any]] = value.items()
        elif t is list or isinstance(value, list):
            children = enumerate(value)
        else:
            return
        for k, v in children:
            t = type(v)
            if t is str:
                if search(v):
                    string(v, (*path, k))
            elif t is dict or t is list:
                path.append(k)
                walk(v)
                path.pop()
            elif t in _SCALARS:
                continue
            elif isinstance(v, str):
                if search(v):
                    string(v, (*path, k))
            elif isinstance(v, (Mapping, list)):
                path.append(k)
                walk(v)
                path.pop()

    if isinstance(node, str):
        if search(node):
            string(node, ())
    else:
        walk(node)
    if data_keys and isinstance(node, Mapping) and isinstance(node.get("data"), Mapping):
        items = list(node["data"].items())
        named: set[int] | None = None
        texts: set[int] | None = None
        if len(items) > MANY_ENTRIES:  # names and values sifted at once; the rest are not read
            keys, values = list(node["data"]), list(node["data"].values())
            named = _candidates(_strings(keys), _NAME_STEMS, lower=True)
            texts = _candidates(_strings(values), _HINT_OR_ANY_TEXT)
        read = range(len(items)) if named is None or texts is None else sorted(named | texts)
        for i in read:
            key, value = items[i]
            # configuration text under such a key (KServe's `credentials`: JSON naming the Secret
            # keys to read) is judged by what it holds, read inside below, not by its key
            config = isinstance(value, str) and _config_text(value)
            if (named is None or i in named) and sensitive_name(key) and plausible(value) and not config:
                add(("data", key), {NAMED_KEY}, str(key))
            if isinstance(value, str) and (texts is None or i in texts):
                text(("data", key), value, str(key))
    return out


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.credentials` for workloads, ConfigMaps and custom resources (a TrainJob's env, an
    Argo CD Application's Helm values); {} for other objects."""
    configmap = obj.get("kind") == "ConfigMap"
    if not configmap and (pod if pod is not None else pod_template(obj)) is None and not custom_resource(obj):
        return {}
    # not its status, nor metadata.managedFields: it names fields (a set's members by value,
    # k:{"name":"DB_PASSWORD"}) whose values are the object's own, walked where they are; its escaped
    # quotes also kept every UPDATE from the text sieve (_possible): 22 -> 72 µs a pod
    found = _found(without_bookkeeping(obj), configmap, prefilter=True)
    out = [hit.entry(list(path)) for path, hit in found.items()]
    md = obj.get("metadata")
    annotations = md.get("annotations") if is_mapping(md) else None
    applied = annotations.get(LAST_APPLIED) if is_mapping(annotations) else None
    if isinstance(applied, str):
        where = ["metadata", "annotations", LAST_APPLIED]
        try:
            decoded = orjson.loads(applied)
        except orjson.JSONDecodeError:
            kinds = types_of(applied)  # not JSON: checked as text
            if kinds:
                out.append({"path": where, "types": kinds, "name": None, "inside": None, "found": []})
        else:
            inner = _found(decoded, isinstance(decoded, Mapping) and decoded.get("kind") == "ConfigMap")
            out += [hit.entry(where, list(path)) for path, hit in inner.items()]
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
