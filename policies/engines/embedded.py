"""Load the Rego library once and evaluate inputs against it.

The embedded backend is regorus (Microsoft's Rust Rego interpreter). For speed it is used the way
ARCHITECTURE.md measured: one engine per process (``clone()`` for workers), every module added once,
and one aggregating query per object that touches only the rules whose METADATA ``kinds`` include
the object's kind. The aggregating modules are generated here, one per kind, at load time.

The aggregating queries run on regorus' compiled Rego VM (``Program`` + ``Rvm``), measured 2.9x
faster than its tree-walking interpreter on the Pod Security rules with identical results (see
docs/benchmarks.md). The VM compiles the modules with their `data` import aliases written out in
full (:mod:`stockade.policies.runtimes.rego_imports`), which nearly halves its time per object. The
interpreter stays loaded: it is the fallback if the VM cannot compile or run a library, it isolates a
failing rule by name, and tests compare the two on every input.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson
import regorus
import yaml

from stockade.policies.frameworks.gatekeeper import AREA as GK_AREA
from stockade.policies.frameworks.gatekeeper import (
    Gatekeeper,
    GatekeeperEngine,
    GatekeeperError,
    load_gatekeeper,
    policy_documents,
)
from stockade.policies.frameworks.vap import AREA as VAP_AREA
from stockade.policies.frameworks.vap import Policies, VapEngine, VapError, load_vap
from stockade.policies.kinds.workloads import WORKLOAD_ALIAS, WORKLOAD_KINDS
from stockade.policies.model import Action, Rule, Severity, Violation
from stockade.policies.runtimes import program_cache
from stockade.policies.runtimes.errors import engine_message, evaluation_message
from stockade.policies.runtimes.rego_imports import expand_data_imports

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "rego"
#: Rule-kind aliases: ``@workloads`` is every built-in workload kind, and stays in the rule's kinds
#: too, since custom workload kinds (RayCluster, a kind a configuration declares) are evaluated under it.
KIND_ALIASES: dict[str, tuple[str, ...]] = {WORKLOAD_ALIAS: WORKLOAD_KINDS}
_AGG_PACKAGE = "stockade_agg"
_PACKAGE_RE = re.compile(r"^package\s+([A-Za-z_][\w.]*)\s*$", re.M)
_DENY_RE = re.compile(r"^deny\s+(contains\b|\[|if\b|:?=)", re.M)
_TEST_RE = re.compile(r"^(test_\w+)\b", re.M)
# a Kubernetes kind, or an ARM type such as Microsoft.Storage/storageAccounts (policies/model.py arm_type)
_KIND_RE = re.compile(
    r"^[A-Za-z][A-Za-z0-9]*$|^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)+(/[A-Za-z][A-Za-z0-9]*)+$"
)
_VM_UNDEFINED = '"<undefined>"'


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
    #: Gatekeeper ConstraintTemplates and constraints of the policy directories; their rules
    #: (GK-<Kind>-<name>) are in `rules` too, but they are evaluated by the GatekeeperEngine
    gatekeeper: Gatekeeper = field(default_factory=Gatekeeper)
    #: ValidatingAdmissionPolicies and their bindings (policies/frameworks/vap.py); their rules
    #: (VAP-<policy>-<index>) are in `rules` too, evaluated by the VapEngine (CEL)
    vap: Policies = field(default_factory=Policies)

    @property
    def uses_inventory(self) -> bool:
        """Some rule reads objects beyond its input: a Gatekeeper template `data.inventory`, a VAP its
        params. The gate must then hand them over (Evaluator.set_inventory)."""
        return self.gatekeeper.uses_inventory or bool(self.vap.param_kinds()) or self.vap.uses_authorizer

    def is_gatekeeper(self, rule_id: str) -> bool:
        return rule_id.startswith("GK-") and self.rules[rule_id].area == GK_AREA

    def is_vap(self, rule_id: str) -> bool:
        return rule_id.startswith("VAP-") and self.rules[rule_id].area == VAP_AREA

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
    roots = ([BUNDLED_DIR] if bundled else []) + [Path(d) for d in dirs]
    lib = Library()
    packages: dict[str, str] = {}
    for root in roots:
        if not root.exists():
            raise PolicyError(f"{root}: policy directory does not exist")
        files = sorted(root.rglob("*.rego")) if root.is_dir() else [root]
        for path in files:
            module = _read_module(path)
            lib.modules.append(module)
            if module.is_test:
                continue
            rule = _rule_of(module)
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


def _metadata_block(text: str) -> tuple[dict[str, Any], int] | None:
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
                data = yaml.load("\n".join(body), Loader=_METADATA_LOADER) or {}
            except yaml.YAMLError as exc:
                raise PolicyError(f"METADATA at line {i + 1} is not valid YAML: {exc}") from None
            if not isinstance(data, dict):
                raise PolicyError(f"METADATA at line {i + 1} must be a mapping")
            return data, i + 1
        if line.startswith("package "):
            return None
    return None


def _rule_of(module: Module) -> Rule | None:
    has_deny = bool(_DENY_RE.search(module.text))
    try:
        block = _metadata_block(module.text)
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
            if k != "*" and not _KIND_RE.match(k):
                raise PolicyError(f"{where}: METADATA custom.kinds: {k!r} is not a kind")
        kinds.extend(expanded)
        if kind in KIND_ALIASES:
            kinds.append(kind)
    try:
        severity = Severity.parse(str(custom["severity"]))
        action = Action(custom.get("action", "deny"))
    except ValueError as exc:
        raise PolicyError(f"{where}: {exc}") from None
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
    )


class RuleEvaluationError(RuntimeError):
    """The engine failed on an input (rule error, engine fault); gates decide how to fail."""


class Engine(Protocol):
    """What every backend offers: evaluate one input for one kind, return the violations."""

    library: Library

    def evaluate(
        self, kind: str, input: Mapping[str, Any], *, library: bool = True, constraints: bool = True
    ) -> list[Violation]:
        """Violations of the library's rules for `kind` (``library``) and of the Gatekeeper
        constraints matching the object (``constraints``)."""
        ...

    def clone(self) -> Engine: ...


class EmbeddedEngine:
    """regorus in-process: compile once, one aggregating query per object."""

    def __init__(
        self,
        library: Library,
        data: Mapping[str, Any],
        enabled: Iterable[str] | None = None,
        *,
        vm: bool = True,
        _clone_of: EmbeddedEngine | None = None,
    ) -> None:
        self.library = library
        self.enabled = frozenset(library.rules if enabled is None else enabled)
        rules = [r for r in library.rules.values() if r.id in self.enabled and not library.is_external(r.id)]
        self._by_kind = _group_by_kind(rules)
        vap_rules = {r.id: r for r in library.rules.values() if r.id in self.enabled and library.is_vap(r.id)}
        self._vap = VapEngine(library.vap, vap_rules) if vap_rules else None
        self._gatekeeper: GatekeeperEngine | None = None
        gk_rules = {
            r.id: r for r in library.rules.values() if r.id in self.enabled and library.is_gatekeeper(r.id)
        }
        if gk_rules:
            try:
                self._gatekeeper = GatekeeperEngine(library.gatekeeper, gk_rules)
            except GatekeeperError as exc:
                raise PolicyError(str(exc)) from None
        # the tree-walking interpreter: built when first needed (a fallback, a rule's own error),
        # since a scan whose compiled program is cached never needs it
        self._engine: Any = None
        self._owner = threading.get_ident()
        self._per_thread = threading.local()
        self._data: Mapping[str, Any] = data
        self._program: Any = None
        self._data_json = "{}"
        self._vm: Any = None
        self.vm_error: str | None = None  # why the compiled VM is not in use, if it is not
        self._modules: list[tuple[str, str]]
        if _clone_of is not None:
            self._modules = _clone_of._modules
            if _clone_of._engine is not None:
                self._engine = _clone_of._engine.clone()
            self._program, self._data_json = _clone_of._program, _clone_of._data_json
            self._load_vm()
            return
        self._modules = [(m.path, m.text) for m in library.policy_modules]
        self._modules += [(f"<stockade-agg:{k}>", _aggregator(k, r)) for k, r in self._by_kind.items()]
        if vm and self._by_kind:
            entries = [_entry(kind) for kind in self._by_kind]
            cache_key = program_cache.key(self._modules, entries)
            self._program = program_cache.load(cache_key)
            if self._program is None:
                self._interpreter()  # parses every module: a syntax error is a PolicyError here
                # Full `data.` references instead of import aliases: about 45 % less VM time (imports.py).
                compiled = [(path, expand_data_imports(text)) for path, text in self._modules]
                try:
                    self._program = regorus.Program.compile_from_modules("{}", compiled, entries)
                except Exception as exc:
                    self.vm_error = engine_message(exc)
                else:
                    program_cache.store(cache_key, self._program)
        else:
            self._interpreter()
        self.set_data(data)

    def _interpreter(self) -> Any:
        """The interpreter holding every module and the data, built on first use."""
        if self._engine is None:
            engine = regorus.Engine()
            for path, text in self._modules:
                try:
                    engine.add_policy(path, text)
                except Exception as exc:  # regorus raises plain exceptions with the parser's message
                    raise PolicyError(f"{path}: {engine_message(exc)}") from None
            engine.add_data_json(self._data_json)
            self._engine = engine
        return self._engine

    def _load_vm(self) -> None:
        if self._program is None:
            return
        vm = regorus.Rvm()
        vm.load_program(self._program)
        # The VM does not use data given at compile time: it must be set on the VM itself.
        vm.set_data_json(self._data_json)
        self._vm = vm

    def set_data(self, data: Mapping[str, Any]) -> None:
        self._data = data
        self._data_json = orjson.dumps({"stockade": {"config": data}}).decode()
        if self._engine is not None:
            self._engine.clear_data()
            self._engine.add_data_json(self._data_json)
        self._load_vm()

    @property
    def uses_vm(self) -> bool:
        return self._vm is not None

    def kinds(self) -> frozenset[str]:
        return frozenset(self._by_kind)

    def rules_for(self, kind: str) -> list[Rule]:
        own = self._by_kind.get(kind) or self._by_kind.get("*", [])
        if self._gatekeeper is not None:
            own = own + [r for r in self._gatekeeper.rules.values() if r.applies_to(kind)]
        if self._vap is not None:
            own = own + [r for r in self._vap.rules.values() if r.applies_to(kind)]
        return own

    def _for_this_thread(self) -> EmbeddedEngine:
        """An engine of this thread's own: regorus objects may only be used by the thread that made them."""
        engine: EmbeddedEngine | None = getattr(self._per_thread, "engine", None)
        if engine is None:
            engine = EmbeddedEngine(self.library, self._data, self.enabled, vm=self._program is not None)
            self._per_thread.engine = engine
        return engine

    def evaluate(
        self, kind: str, input: Mapping[str, Any], *, library: bool = True, constraints: bool = True
    ) -> list[Violation]:
        if threading.get_ident() != self._owner:
            return self._for_this_thread().evaluate(kind, input, library=library, constraints=constraints)
        agg = kind if kind in self._by_kind else "*"
        rules = self._by_kind.get(agg)
        found: list[Violation] = []
        if rules and library:
            text = orjson.dumps(input).decode()
            compiled = self.evaluate_compiled(agg, text)
            found = compiled if compiled is not None else self.evaluate_interpreted(agg, rules, text)
        if self._gatekeeper is not None and constraints:
            try:
                found = found + self._gatekeeper.evaluate(input)
            except GatekeeperError as exc:
                raise RuleEvaluationError(str(exc)) from None
        if self._vap is not None and constraints:
            found = found + self._vap.evaluate(input)
        return found

    def set_inventory(self, objects: Iterable[Mapping[str, Any]], *, decisive: bool = False) -> None:
        """`data.inventory` for Gatekeeper templates (policies/frameworks/gatekeeper.py), and params
        candidates and RBAC objects for VAPs (policies/frameworks/vap.py; `decisive`: every binding is
        known and RBAC is the authorizer); a no-op without them."""
        objects = list(objects)
        if self._gatekeeper is not None:
            self._gatekeeper.set_inventory(objects)
        if self._vap is not None:
            self._vap.set_objects(objects, decisive=decisive)

    def evaluate_compiled(self, agg: str, text: str) -> list[Violation] | None:
        """The compiled VM's answer, or None where it gives none (not compiled, an error, or an
        "<undefined>" value, which is how the VM reports some evaluation errors, such as conflicting
        rule values, that the interpreter raises and names): the caller then asks the interpreter."""
        if self._vm is None:
            return None
        self._vm.set_input_json(text)
        try:
            raw = self._vm.execute_entry_point(_entry(agg))
        except Exception:
            return None
        if _VM_UNDEFINED in raw:
            return None
        return _violations(self.library.rules, orjson.loads(raw) or {})

    def evaluate_interpreted(self, agg: str, rules: list[Rule], text: str) -> list[Violation]:
        """The tree-walking interpreter's answer (the reference the VM is tested against)."""
        engine = self._interpreter()
        engine.set_input_json(text)
        try:
            raw = engine.eval_rule_as_json(_entry(agg))
        except Exception:
            # One broken rule must not hide the others: evaluate one by one to name the culprit.
            return self._evaluate_each(rules)
        results = orjson.loads(raw) or {}
        return _violations(self.library.rules, results)

    def _evaluate_each(self, rules: list[Rule]) -> list[Violation]:
        out: list[Violation] = []
        errors = []
        for rule in rules:
            try:
                raw = self._interpreter().eval_rule_as_json(f"{rule.package}.deny")
            except Exception as exc:
                errors.append(f"{rule.id}: {evaluation_message(exc)}")
                continue
            out.extend(_violations(self.library.rules, {rule.id: orjson.loads(raw) or []}))
        if errors:
            raise RuleEvaluationError("; ".join(errors))
        return out

    def clone(self) -> EmbeddedEngine:
        return EmbeddedEngine(self.library, {}, self.enabled, _clone_of=self)


def _group_by_kind(rules: Iterable[Rule]) -> dict[str, list[Rule]]:
    by_kind: dict[str, list[Rule]] = {}
    wildcard = [r for r in rules if "*" in r.kinds]
    for rule in rules:
        for kind in rule.kinds:
            if kind != "*":
                by_kind.setdefault(kind, [])
                if rule not in by_kind[kind]:
                    by_kind[kind].append(rule)
    for kind in by_kind:
        by_kind[kind].extend(r for r in wildcard if r not in by_kind[kind])
    if wildcard:
        by_kind["*"] = list(wildcard)
    return by_kind


def _agg_name(kind: str) -> str:
    return "any_kind" if kind == "*" else "k_" + re.sub(r"\W", "_", kind)  # ARM types: "." and "/" -> "_"


def _entry(kind: str) -> str:
    return f"data.{_AGG_PACKAGE}.{_agg_name(kind)}.results"


def _aggregator(kind: str, rules: list[Rule]) -> str:
    entries = ",\n".join(f'\t"{r.id}": {r.package}.deny' for r in rules)
    return f"package {_AGG_PACKAGE}.{_agg_name(kind)}\n\nimport rego.v1\n\nresults := {{\n{entries},\n}}\n"


def _violations(rules: Mapping[str, Rule], results: Mapping[str, Any]) -> list[Violation]:
    out: list[Violation] = []
    for rule_id, items in results.items():
        rule = rules[rule_id]
        for item in items or ():
            if isinstance(item, Mapping):
                path = item.get("path") or ()
                details = item.get("details") or {}
                out.append(
                    Violation(
                        rule=rule,
                        msg=str(item.get("msg") or rule.title),
                        path=tuple(p for p in path if isinstance(p, str | int)),
                        details=details if isinstance(details, Mapping) else {"value": details},
                    )
                )
            else:
                out.append(Violation(rule=rule, msg=str(item)))
    return out
