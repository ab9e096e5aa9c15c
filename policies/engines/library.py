"""The policy library: the bundled Rego rules, the policy directories, and the rules their METADATA
and their frameworks (Gatekeeper, ValidatingAdmissionPolicy) describe.

Every engine evaluates the same :class:`Library`: the rules are grouped by the kinds they judge, and
each kind is asked one aggregating query (``data.stockade_agg.<kind>.results``, :func:`aggregator`)
whose answer :func:`violations_of` reads back. The embedded engine compiles those queries, the OPA
bundle ships them, the remote engine asks them over OPA's Data API.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from stockade.policies.frameworks.common import GatekeeperError, policy_documents
from stockade.policies.kinds.api import CUSTOM_ALIAS
from stockade.policies.kinds.workloads import WORKLOAD_ALIAS, WORKLOAD_KINDS
from stockade.policies.model import (
    BOOKKEEPING_METADATA,
    Action,
    Rule,
    Severity,
    Violation,
    is_mapping,
    without_bookkeeping,
)

if TYPE_CHECKING:  # the frameworks (and CEL) are imported when a policy directory is read, or asked for
    from stockade.policies.frameworks.gatekeeper import Gatekeeper
    from stockade.policies.frameworks.vap import Policies

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "rego"
_BUNDLED_PREFIX = str(BUNDLED_DIR) + os.sep


#: Rule-kind aliases: ``@workloads`` is every built-in workload kind, and stays in the rule's kinds
#: too, since custom workload kinds (RayCluster, a kind a configuration declares) are evaluated under it.
#: ``@custom`` (kinds.api.CUSTOM_ALIAS) stands for itself: the custom resources no rule names.
KIND_ALIASES: dict[str, tuple[str, ...]] = {WORKLOAD_ALIAS: WORKLOAD_KINDS}


AGG_PACKAGE = "stockade_agg"
#: the aggregating package of the rules of the policy directories, where the embedded engine keeps them
#: apart from the bundled library's (engines/embedded.py: they run on the interpreter)
CUSTOM_AGG_PACKAGE = "stockade_custom_agg"


_PACKAGE_RE = re.compile(r"^package\s+([A-Za-z_][\w.]*)\s*$", re.M)


_DENY_RE = re.compile(r"^deny\s+(contains\b|\[|if\b|:?=)", re.M)


_TEST_RE = re.compile(r"^(test_\w+)\b", re.M)


# a trigger (METADATA custom.triggers): letters, digits, "." and "-", which JSON writes only as themselves
# or as \u escapes, between optional quotes (a key's, '"hostPort"')
_TRIGGER_RE = re.compile(r'^"?[A-Za-z0-9.-]+"?$')


# a Kubernetes kind, or an ARM type such as Microsoft.Storage/storageAccounts (policies/model.py arm_type)
_KIND_RE = re.compile(
    r"^[A-Za-z][A-Za-z0-9]*$|^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)+(/[A-Za-z][A-Za-z0-9]*)+$"
)


class PolicyError(ValueError):
    """A Rego module that cannot be loaded; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Module:
    path: str
    text: str
    package: str

    @property
    def is_test(self) -> bool:
        return self.path.endswith("_test.rego")

    def test_names(self) -> list[str]:
        return _TEST_RE.findall(self.text)


@dataclass(slots=True)
class Library:
    """The Rego modules of the active library and the rules their METADATA describes."""

    modules: list[Module] = field(default_factory=list)
    rules: dict[str, Rule] = field(default_factory=dict)
    # :attr:`gatekeeper` and :attr:`vap`; None while empty: a library without policy directories
    # (a one-file scan) never imports the frameworks' modules
    _gatekeeper: Gatekeeper | None = None
    _vap: Policies | None = None

    @property
    def gatekeeper(self) -> Gatekeeper:
        """Gatekeeper ConstraintTemplates and constraints of the policy directories; their rules
        (GK-<Kind>-<name>) are in `rules` too, but they are evaluated by the GatekeeperEngine."""
        if self._gatekeeper is None:
            from stockade.policies.frameworks.gatekeeper import Gatekeeper

            self._gatekeeper = Gatekeeper()
        return self._gatekeeper

    @gatekeeper.setter
    def gatekeeper(self, value: Gatekeeper) -> None:
        self._gatekeeper = value

    @property
    def vap(self) -> Policies:
        """ValidatingAdmissionPolicies and their bindings (policies/frameworks/vap.py); their rules
        (VAP-<policy>-<index>) are in `rules` too, evaluated by the VapEngine (CEL)."""
        if self._vap is None:
            from stockade.policies.frameworks.vap import Policies

            self._vap = Policies()
        return self._vap

    @vap.setter
    def vap(self, value: Policies) -> None:
        self._vap = value

    @property
    def uses_inventory(self) -> bool:
        """Some rule reads objects beyond its input: a Gatekeeper template `data.inventory`, a VAP its
        params. The gate must then hand them over (Evaluator.set_inventory)."""
        gatekeeper, vap = self._gatekeeper, self._vap
        return (gatekeeper is not None and gatekeeper.uses_inventory) or (
            vap is not None and (bool(vap.param_kinds()) or vap.uses_authorizer)
        )

    def is_gatekeeper(self, rule_id: str) -> bool:
        if not rule_id.startswith("GK-"):
            return False
        from stockade.policies.frameworks.gatekeeper import AREA

        return self.rules[rule_id].area == AREA

    def is_vap(self, rule_id: str) -> bool:
        if not rule_id.startswith("VAP-"):
            return False
        from stockade.policies.frameworks.vap import AREA

        return self.rules[rule_id].area == AREA

    def is_bundled(self, rule_id: str) -> bool:
        """A rule of the library stockade ships (not of a policy directory): its file was read from
        under BUNDLED_DIR (load_library reads that root as resolved; a policy directory holding the
        same files would be refused for their duplicate ids)."""
        return self.rules[rule_id].file.startswith(_BUNDLED_PREFIX)

    def is_external(self, rule_id: str) -> bool:
        """Evaluated by another engine than the library's Rego (Gatekeeper templates, VAPs)."""
        return self.is_gatekeeper(rule_id) or self.is_vap(rule_id)

    @property
    def policy_modules(self) -> list[Module]:
        return [m for m in self.modules if not m.is_test]

    @property
    def test_modules(self) -> list[Module]:
        return [m for m in self.modules if m.is_test]


def load_library(dirs: Sequence[Path] = (), *, bundled: bool = True) -> Library:
    """Read every ``.rego`` file of the bundled library and of ``dirs`` (recursively)."""
    lib = Library()
    packages: dict[str, str] = {}
    roots = [Path(d) for d in dirs]
    known = _BundledCache() if bundled else None
    if known is not None:
        if known.restore(lib):
            packages = {rule.package: rule.file for rule in lib.rules.values()}
        else:
            roots.insert(0, BUNDLED_DIR)
    metadata = _MetadataCache() if roots else None
    for root in roots:
        if not root.exists():
            raise PolicyError(f"{root}: policy directory does not exist")
        files = sorted(root.rglob("*.rego")) if root.is_dir() else [root]
        for path in files:
            module = _read_module(path)
            lib.modules.append(module)
            if module.is_test:
                continue
            rule = _rule_of(module, metadata)
            if rule is None:
                continue
            if rule.id in lib.rules:
                raise PolicyError(
                    f"{path}: rule id {rule.id} is already defined in {lib.rules[rule.id].file}"
                )
            if rule.package in packages:
                raise PolicyError(
                    f"{path}: package {rule.package} is already defined in {packages[rule.package]}"
                )
            packages[rule.package] = str(path)
            lib.rules[rule.id] = rule
        if known is not None and root is BUNDLED_DIR:  # read afresh: kept for the next start
            known.store(lib)
    if metadata is not None:
        metadata.store()
    if not dirs:
        return lib  # no Gatekeeper template or VAP: those come from policy directories only
    from stockade.policies.frameworks.gatekeeper import load_gatekeeper
    from stockade.policies.frameworks.vap import VapError, load_vap

    try:
        documents = policy_documents([Path(d) for d in dirs])  # read once, for both loaders
        lib.gatekeeper = load_gatekeeper([], documents=documents)
    except GatekeeperError as exc:
        raise PolicyError(str(exc)) from None
    try:
        lib.vap = load_vap([], documents)
    except VapError as exc:
        raise PolicyError(str(exc)) from None
    for rule_id, rule in {**lib.gatekeeper.rules(), **lib.vap.rules()}.items():
        if rule_id in lib.rules:
            raise PolicyError(
                f"{rule.file}: rule id {rule_id} is already defined in {lib.rules[rule_id].file}"
            )
        lib.rules[rule_id] = rule
    return lib


def _read_module(path: Path) -> Module:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{path}: cannot read: {exc}") from None
    m = _PACKAGE_RE.search(text)
    if m is None:
        raise PolicyError(f"{path}:1: no package declaration")
    return Module(str(path), text, m.group(1))


_METADATA_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _BundledCache:
    """The bundled library as read last time: every module's text and every rule, kept with the
    size and modification time (in seconds) of each of its files and of the code that turns them into
    rules: what Python's own bytecode cache checks, and what an image layer keeps. Reading some 260
    files and their METADATA was 11-16 ms of every start (a one-file scan, a webhook worker, a
    CronJob's audit); restoring them is about 2 ms.

    Kept beside the compiled programs (:mod:`stockade.policies.runtimes.program_cache`: inside the
    installed package, never a shared cache; nothing kept where that folder is not writable), as
    `marshal` data. Any file added, removed, resized or touched reads the whole library again; a cache
    file that does not load is ignored and replaced. Policy directories are always read."""

    NAME = "library.marshal"
    #: the code that reads a module into a rule: a change to any of them is a change of library
    _CODE = (Path(__file__), Path(__file__).resolve().parent.parent / "model.py")

    def __init__(self) -> None:
        from stockade.policies.runtimes.program_cache import FOLDER

        self.path = FOLDER / self.NAME
        self.stamp = self._stamp()

    @staticmethod
    def _files(folder: str, rel: str, out: list[tuple[str, int, int]]) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = f"{rel}/{entry.name}" if rel else entry.name
                if entry.is_dir(follow_symlinks=True):
                    _BundledCache._files(entry.path, name, out)
                elif entry.name.endswith(".rego"):
                    st = entry.stat()
                    out.append((name, st.st_size, int(st.st_mtime)))

    def _stamp(self) -> Any:
        files: list[tuple[str, int, int]] = []
        try:
            self._files(str(BUNDLED_DIR), "", files)
            code = [(str(p), p.stat().st_size, int(p.stat().st_mtime)) for p in self._CODE]
        except (OSError, RecursionError):  # unreadable, or a folder linked into itself: no cache
            return None
        # the order rglob gives, sorted as paths: by their parts
        files.sort(key=lambda f: f[0].split("/"))
        return (str(BUNDLED_DIR), tuple(files), tuple(code), WORKLOAD_KINDS)

    def restore(self, lib: Library) -> bool:
        """Whether the library was restored into ``lib`` (its modules and rules), as it was read."""
        if self.stamp is None:
            return False
        try:
            stamp, modules, rules = marshal.loads(self.path.read_bytes())
            if stamp != self.stamp:
                return False
            prefix = str(BUNDLED_DIR) + "/"
            restored = [Module(prefix + rel, text, package) for rel, text, package in modules]
            found = {}
            for row in rules:
                enums = {"severity": Severity(row["severity"]), "action": Action(row["action"])}
                rule = Rule(**{**row, **enums, "file": prefix + row["file"]})
                found[rule.id] = rule
        except Exception:  # absent, unreadable, another layout or not ours: read the files
            return False
        lib.modules.extend(restored)
        lib.rules.update(found)
        return True

    def store(self, lib: Library) -> None:
        if self.stamp is None:
            return
        from stockade.policies.runtimes.program_cache import keep

        cut = len(str(BUNDLED_DIR)) + 1
        modules = [(m.path[cut:], m.text, m.package) for m in lib.modules]
        # each rule's fields by name (a field added to Rule changes model.py, and so the stamp)
        rules = [
            {
                **{f.name: getattr(r, f.name) for f in fields(Rule)},
                "severity": int(r.severity),
                "action": r.action.value,
                "file": r.file[cut:],
            }
            for r in lib.rules.values()
        ]
        try:
            keep(self.NAME, marshal.dumps((self.stamp, modules, rules)))
        except Exception:  # a read-only install
            return


class _MetadataCache:
    """The METADATA blocks read last time, by the SHA-256 of each block's text: parsing some 120
    blocks with libyaml was the larger part of loading the library, at every start of a one-file scan.

    Kept beside the compiled programs (:mod:`stockade.policies.runtimes.program_cache`: inside the
    installed package, never a shared cache, nothing kept where that folder is not writable), as
    `marshal` data; holds the blocks of the last library read. A block whose text changed has another
    key and is parsed again; a file that does not load is ignored and replaced."""

    NAME = "metadata.marshal"

    def __init__(self) -> None:
        from stockade.policies.runtimes.program_cache import FOLDER

        self.path = FOLDER / self.NAME
        try:
            known = marshal.loads(self.path.read_bytes())
        except Exception:  # absent, unreadable or not ours: every block is parsed
            known = {}
        self.known: dict[bytes, Any] = known if isinstance(known, dict) else {}
        self.used: dict[bytes, Any] = {}

    def load(self, body: str) -> Any:
        key = hashlib.sha256(body.encode()).digest()
        value = self.known[key] if key in self.known else yaml.load(body, Loader=_METADATA_LOADER)
        self.used[key] = value
        return value

    def store(self) -> None:
        if self.used.keys() == self.known.keys():
            return
        from stockade.policies.runtimes.program_cache import keep

        try:
            # ValueError: a value marshal does not carry (a date); OSError: a read-only install
            keep(self.NAME, marshal.dumps(self.used))
        except Exception:
            return


def _metadata_block(text: str, cache: _MetadataCache | None = None) -> tuple[dict[str, Any], int] | None:
    """The package-scoped ``# METADATA`` YAML block and its line, if there is one."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "# METADATA":
            body = []
            for nxt in lines[i + 1 :]:
                if not nxt.startswith("#"):
                    break
                body.append(nxt[2:] if nxt.startswith("# ") else nxt[1:])
            try:
                # libyaml's loader: the library's own METADATA, read at every start (PyYAML's pure
                # Python parser took ~0.5 s of a one-file scan for 85 rules)
                text = "\n".join(body)
                data = (cache.load(text) if cache else yaml.load(text, Loader=_METADATA_LOADER)) or {}
            except yaml.YAMLError as exc:
                raise PolicyError(f"METADATA at line {i + 1} is not valid YAML: {exc}") from None
            if not isinstance(data, dict):
                raise PolicyError(f"METADATA at line {i + 1} must be a mapping")
            return data, i + 1
        if line.startswith("package "):
            return None
    return None


def _rule_of(module: Module, metadata: _MetadataCache | None = None) -> Rule | None:
    has_deny = bool(_DENY_RE.search(module.text))
    try:
        block = _metadata_block(module.text, metadata)
    except PolicyError as exc:
        raise PolicyError(f"{module.path}: {exc}") from None
    if block is None:
        if has_deny:
            raise PolicyError(f"{module.path}:1: package {module.package} defines deny but has no METADATA")
        return None
    meta, line = block
    custom = meta.get("custom") or {}
    where = f"{module.path}:{line}"
    for key in ("id", "severity", "kinds"):
        if key not in custom:
            raise PolicyError(f"{where}: METADATA custom.{key} is required")
    if not has_deny:
        raise PolicyError(f"{where}: rule {custom['id']} has METADATA but no deny rule")
    kinds: list[str] = []
    for kind in custom["kinds"]:
        expanded = KIND_ALIASES.get(kind, (kind,))
        for k in expanded:
            if k not in ("*", CUSTOM_ALIAS) and not _KIND_RE.match(k):
                raise PolicyError(f"{where}: METADATA custom.kinds: {k!r} is not a kind")
        kinds.extend(expanded)
        if kind in KIND_ALIASES:
            kinds.append(kind)
    try:
        severity = Severity.parse(str(custom["severity"]))
        action = Action(custom.get("action", "deny"))
    except ValueError as exc:
        raise PolicyError(f"{where}: {exc}") from None
    triggers = custom.get("triggers") or []
    well_formed = isinstance(triggers, list) and all(
        isinstance(t, str) and _TRIGGER_RE.match(t) for t in triggers
    )
    if not well_formed:
        raise PolicyError(
            f"{where}: METADATA custom.triggers: a list of strings of letters, digits, '.' and '-', "
            "each between optional double quotes"
        )
    parts = module.package.split(".")
    area = parts[1] if len(parts) > 2 and parts[0] == "stockade" else parts[0]
    return Rule(
        id=str(custom["id"]),
        title=str(meta.get("title") or custom["id"]),
        description=" ".join(str(meta.get("description") or "").split()),
        area=str(custom.get("area") or area),
        severity=severity,
        kinds=tuple(dict.fromkeys(kinds)),
        frameworks=tuple(str(f) for f in custom.get("frameworks") or ()),
        remediation=" ".join(str(custom.get("remediation") or "").split()),
        package="data." + module.package,
        file=module.path,
        action=action,
        triggers=tuple(triggers),
    )


#: Input fields no bundled rule reads: left out of the JSON text the bundled library is evaluated
#: on, so that an UPDATE's ``oldObject`` (as large as the object), a live object's ``status`` and
#: ``metadata.managedFields`` (often larger than its spec) are neither written nor parsed per input.
#: A policy directory's rules and other engines are given everything (they may read anything).
#: tests/policies/test_library_input.py holds the bundled Rego to it.
UNREAD_INPUT = ("oldObject", "userInfo", "operation")
UNREAD_OBJECT = ("status",)
UNREAD_METADATA = BOOKKEEPING_METADATA
#: What the bundled library reads of a workload's object (an input with ``pod``): its rules read the
#: pod spec as ``input.pod``, a copy of where it sits in the object, so the rest of the object (the
#: pod spec a second time, a Deployment's strategy, a Job's settings) is left out, as it already is
#: for a custom workload kind (``engines.base.evaluate_inputs``). Parsing it again cost the VM a
#: third of each pod input's parse.
WORKLOAD_OBJECT = ("apiVersion", "kind", "metadata")


def library_input(inp: Mapping[str, Any]) -> Mapping[str, Any]:
    """``inp`` without what no bundled rule reads (:data:`UNREAD_INPUT`, the object's
    :data:`UNREAD_OBJECT`, or all but :data:`WORKLOAD_OBJECT` of a workload's, and both metadata's
    :data:`UNREAD_METADATA`); ``inp`` itself when it holds none of them. Nothing is copied but the
    mappings that lose a key."""
    out = dict(inp) if any(k in inp for k in UNREAD_INPUT) else None
    if out is not None:
        for key in UNREAD_INPUT:
            out.pop(key, None)
    obj = inp.get("object")
    unread: Sequence[str] = UNREAD_OBJECT
    if is_mapping(inp.get("pod")) and is_mapping(obj):
        unread = [k for k in obj if k not in WORKLOAD_OBJECT]
    for key, drop in (("object", unread), ("pod", ())):
        value = inp.get(key)
        slim = without_bookkeeping(value, drop)
        if slim is not value:
            out = dict(inp) if out is None else out
            out[key] = slim
    return inp if out is None else out


def group_by_kind(rules: Iterable[Rule]) -> dict[str, list[Rule]]:
    """The rules of each kind, in their order, each once (by id: comparing whole Rule dataclasses
    field by field cost a one-file scan milliseconds), the wildcard rules after each kind's own."""
    rules = list(rules)
    by_kind: dict[str, dict[str, Rule]] = {}
    wildcard = [r for r in rules if "*" in r.kinds]
    for rule in rules:
        for kind in rule.kinds:
            if kind != "*":
                by_kind.setdefault(kind, {}).setdefault(rule.id, rule)
    out = {}
    for kind, own in by_kind.items():
        for r in wildcard:
            own.setdefault(r.id, r)
        out[kind] = list(own.values())
    if wildcard:
        out["*"] = list(wildcard)
    return out


def agg_name(kind: str) -> str:
    if kind.endswith(LEAN):
        return "lean_" + agg_name(kind[: -len(LEAN)])
    return "any_kind" if kind == "*" else "k_" + re.sub(r"\W", "_", kind)  # ARM types: "." and "/" -> "_"


#: The key of a kind's lean aggregate among the aggregates (``kind + LEAN``): no kind ends with it.
LEAN = "\x00lean"


@dataclass(frozen=True, slots=True)
class Lean:
    """A kind's lean aggregate: its rules but those with triggers (METADATA ``custom.triggers``), asked
    of an input whose JSON text holds none of their triggers (:meth:`fits`), which none of them could
    report. The full aggregate answers every other input, and any text with a ``\\u`` escape (a
    key could be spelled with one)."""

    kind: str  # the aggregate's key: the kind's + LEAN
    rules: list[Rule]
    pattern: Any  # RE2, every trigger and "\\u": linear in the text, about 7 µs for a 4 KB pod

    def fits(self, text: str | bytes) -> bool:
        return self.pattern.search(text) is None


def lean_aggregates(by_kind: Mapping[str, list[Rule]]) -> dict[str, Lean]:
    """The lean aggregate of each kind (key of ``by_kind``) with a rule that has triggers."""
    import re2  # type: ignore[import-untyped]

    out = {}
    patterns: dict[tuple[str, ...], Any] = {}  # the workload kinds share one set of triggers
    for kind, rules in by_kind.items():
        triggers = tuple(sorted({t for r in rules for t in r.triggers}))
        if triggers:
            pattern = patterns.get(triggers)
            if pattern is None:
                pattern = patterns[triggers] = re2.compile("|".join([*map(re.escape, triggers), r"\\u"]))
            out[kind] = Lean(kind + LEAN, [r for r in rules if not r.triggers], pattern)
    return out


@functools.lru_cache(maxsize=4096)
def agg_entry(kind: str, package: str = AGG_PACKAGE) -> str:
    return f"data.{package}.{agg_name(kind)}.results"


def rule_entry(package: str) -> str:
    """The compiled program's entry point of one rule's violations (its package's ``deny``)."""
    return f"{package}.deny"


def aggregator(kind: str, rules: list[Rule], package: str = AGG_PACKAGE) -> str:
    entries = "".join(f'\t"{r.id}": {r.package}.deny,\n' for r in rules)
    return f"package {package}.{agg_name(kind)}\n\nimport rego.v1\n\nresults := {{\n{entries}}}\n"


def violations_of(rules: Mapping[str, Rule], results: Mapping[str, Any]) -> list[Violation]:
    out: list[Violation] = []
    for rule_id, items in results.items():
        rule = rules[rule_id]
        for item in items or ():
            if is_mapping(item):
                path = item.get("path") or ()
                details = item.get("details") or {}
                out.append(
                    Violation(
                        rule=rule,
                        msg=str(item.get("msg") or rule.title),
                        path=tuple(p for p in path if isinstance(p, str | int)),
                        details=details if is_mapping(details) else {"value": details},
                    )
                )
            else:
                out.append(Violation(rule=rule, msg=str(item)))
    return out
