"""The embedded engine: regorus (Microsoft's Rust Rego interpreter) in this process.

For speed it is used the way the starting design measured: one engine per process (``clone()`` for
workers), every module added once, and one aggregating query per object that touches only the rules
whose METADATA ``kinds`` include the object's kind (the queries: :mod:`.library`). Gatekeeper
constraints and VAPs of the library are evaluated by their frameworks' own engines, from here.

The aggregating queries run on regorus' compiled Rego VM (``Program`` + ``Rvm``), measured 2.9x
faster than its tree-walking interpreter on the Pod Security rules with identical results (see
docs/benchmarks.md). The VM compiles the modules with their `data` import aliases written out in
full (:mod:`stockade.policies.runtimes.rego_imports`), which nearly halves its time per object. The
interpreter stays loaded: it is the fallback if the VM cannot compile or run a library, it isolates a
failing rule by name, and tests compare the two on every input.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import orjson
import regorus

from stockade.policies.engines.base import RuleEvaluationError
from stockade.policies.engines.library import (
    AGG_PACKAGE,
    CUSTOM_AGG_PACKAGE,
    Library,
    PolicyError,
    agg_entry,
    agg_name,
    aggregator,
    group_by_kind,
    lean_aggregates,
    library_input,
    rule_entry,
    violations_of,
)
from stockade.policies.frameworks.common import GatekeeperError
from stockade.policies.model import Rule, Violation
from stockade.policies.runtimes import program_cache
from stockade.policies.runtimes.errors import engine_message, evaluation_message

if TYPE_CHECKING:  # imported when the library has Gatekeeper templates or VAPs (policy directories)
    from stockade.policies.frameworks.gatekeeper import GatekeeperEngine
    from stockade.policies.frameworks.vap import VapEngine

_VM_UNDEFINED = '"<undefined>"'


class EmbeddedEngine:
    """regorus in-process: compile once, one aggregating query per object."""

    def __init__(
        self,
        library: Library,
        data: Mapping[str, Any],
        enabled: Iterable[str] | None = None,
        *,
        vm: bool = True,
        program: bytes | None = None,
        _clone_of: EmbeddedEngine | None = None,
    ) -> None:
        self.library = library
        self.enabled = frozenset(library.rules if enabled is None else enabled)
        rules = [r for r in library.rules.values() if r.id in self.enabled and not library.is_external(r.id)]
        self._by_kind = group_by_kind(rules)
        # The compiled VM evaluates a builtin's error (to_number("x"), an invalid regex) as undefined,
        # where the interpreter raises it. The bundled rules guard their builtins' arguments (tested:
        # the VM and interpreter differentials never raise); the rules of policy directories run on
        # the interpreter, so that their errors are errors, never a pass.
        self._vm_by_kind = group_by_kind([r for r in rules if library.is_bundled(r.id)])
        # each kind's aggregate without the rules whose triggers an input's text does not hold
        # (library.Lean); kept apart from _vm_by_kind, whose keys are kinds an object may name
        self._lean = lean_aggregates(self._vm_by_kind)
        self._lean_rules = {lean.kind: lean.rules for lean in self._lean.values()}
        self._custom_by_kind = group_by_kind([r for r in rules if not library.is_bundled(r.id)])
        vap_rules = {r.id: r for r in library.rules.values() if r.id in self.enabled and library.is_vap(r.id)}
        self._vap: VapEngine | None = None
        if vap_rules:
            from stockade.policies.frameworks.vap import VapEngine

            self._vap = VapEngine(library.vap, vap_rules)
        self._gatekeeper: GatekeeperEngine | None = None
        gk_rules = {
            r.id: r for r in library.rules.values() if r.id in self.enabled and library.is_gatekeeper(r.id)
        }
        if gk_rules:
            from stockade.policies.frameworks.gatekeeper import GatekeeperEngine

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
        self._modules += [
            (f"<stockade-agg:{agg_name(k)}>", aggregator(k, r))
            for k, r in [*self._vm_by_kind.items(), *self._lean_rules.items()]
        ]
        self._modules += [
            (f"<stockade-custom-agg:{k}>", aggregator(k, r, CUSTOM_AGG_PACKAGE))
            for k, r in self._custom_by_kind.items()
        ]
        if program is not None and vm and self._vm_by_kind:
            # the compiled program of another engine with the same library, rules and entry
            # points (serialized_program): it parsed and compiled them, so neither is done again
            self._program = program_cache.deserialized(program)
            if self._program is None:  # never compiled here instead: the caller may not afford it
                raise PolicyError("the serialized program could not be restored")
        else:
            self._compile(vm)
        self.set_data(data)

    def _compile(self, vm: bool) -> None:
        """The compiled program, from the cache or compiled here; the interpreter where it is needed."""
        if self._custom_by_kind:
            self._interpreter()  # the policy directories' rules: a syntax error is a PolicyError here
        if vm and self._vm_by_kind:
            entries = [agg_entry(kind) for kind in [*self._vm_by_kind, *self._lean_rules]]
            entries += sorted({rule_entry(r.package) for rules in self._vm_by_kind.values() for r in rules})
            cache_key = program_cache.key(self._modules, entries)
            self._program = program_cache.load(cache_key)
            if self._program is None:
                # imported here: a run that finds its program in the cache never expands an import
                from stockade.policies.runtimes.rego_imports import expand_data_imports

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
        found: list[Violation] = []
        if library and (self._vm_by_kind or self._custom_by_kind):
            # what no bundled rule reads is left out, unless a policy directory's rule reads the kind
            lean = input if self._custom_reads(kind) else library_input(input)
            raw = orjson.dumps(lean)
            found = self.evaluate_json(kind, raw.decode(), raw=raw)
        if self._gatekeeper is not None and constraints:
            try:
                found = found + self._gatekeeper.evaluate(input)
            except GatekeeperError as exc:
                raise RuleEvaluationError(str(exc)) from None
        if self._vap is not None and constraints:
            found = found + self._vap.evaluate(input)
        return found

    def _aggregate(self, kind: str, text: str | bytes) -> str:
        """The aggregate that judges an input of ``kind`` given as JSON ``text``: the kind's own (or
        the wildcard's), or its lean one where the text holds none of the left-out rules' triggers."""
        agg = kind if kind in self._vm_by_kind else "*"
        lean = self._lean.get(agg)
        return lean.kind if lean is not None and lean.fits(text) else agg

    def _agg_rules(self, agg: str) -> list[Rule] | None:
        """The rules of an aggregate (:meth:`_aggregate`)."""
        rules = self._vm_by_kind.get(agg)
        return self._lean_rules.get(agg) if rules is None else rules

    def _custom_reads(self, kind: str) -> bool:
        """Whether a policy directory's rule reads ``kind`` (its own or the wildcard's)."""
        return (kind if kind in self._custom_by_kind else "*") in self._custom_by_kind

    def serialized_program(self) -> bytes | None:
        """The compiled program in regorus' binary form (for an engine of the same library and rules
        in another process or thread: ``program=``), or None without one."""
        return None if self._program is None else bytes(self._program.serialize_binary())

    @property
    def owner(self) -> int:
        """The thread (``threading.get_ident()``) that made this engine's regorus objects."""
        return self._owner

    @property
    def library_only(self) -> bool:
        """No Gatekeeper constraint or VAP is evaluated besides the library's Rego: an input is then
        judged from its JSON text alone (:meth:`evaluate_json`)."""
        return self._gatekeeper is None and self._vap is None

    def evaluate_json(self, kind: str, text: str, *, raw: bytes | None = None) -> list[Violation]:
        """The library's violations for an input given as JSON text (what :meth:`evaluate` serialises
        the input to): the engine process receives its inputs as text and hands them on unparsed.
        ``raw``: the same text as UTF-8, where the caller has it (searched for triggers a little
        faster)."""
        if threading.get_ident() != self._owner:
            return self._for_this_thread().evaluate_json(kind, text, raw=raw)
        found: list[Violation] = []
        agg = self._aggregate(kind, text if raw is None else raw)
        rules = self._agg_rules(agg)
        if rules:
            compiled = self.evaluate_compiled(agg, text)
            found = compiled if compiled is not None else self.evaluate_interpreted(agg, rules, text)
        agg = kind if kind in self._custom_by_kind else "*"
        rules = self._custom_by_kind.get(agg)
        if rules:
            found = found + self.evaluate_interpreted(agg, rules, text, CUSTOM_AGG_PACKAGE)
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
        raw = self._compiled_text(agg, text)
        return None if raw is None else violations_of(self.library.rules, orjson.loads(raw) or {})

    def _compiled_text(self, agg: str, text: str, *, bounded: bool = False) -> str | None:
        """The compiled VM's answer as the JSON text it writes (rule id -> violations), or None
        (:meth:`evaluate_compiled`). ``bounded``: one VM run and nothing more (None past the
        instruction limit), what may run where nothing can be stopped."""
        if self._vm is None:
            return None
        self._vm.set_input_json(text)
        try:
            raw: str = self._vm.execute_entry_point(agg_entry(agg))
        except Exception:
            # Past the VM's instruction limit (25,000 in this regorus build) on a large object: a
            # ClusterRole of many rules, a DaemonSet of many containers (9 % of the inputs of
            # kubeflow, kserve, kube-prometheus and gpu-operator manifests). Each rule alone has
            # the whole budget; only where one still does not fit does the interpreter answer.
            return None if bounded else self._rule_by_rule(agg, text)
        return None if _VM_UNDEFINED in raw else raw

    def _rule_by_rule(self, agg: str, text: str) -> str | None:
        """The aggregated answer for ``agg`` (the input ``text``, set in the VM), each rule's
        ``deny`` run on its own (:func:`rule_entry`), written as the aggregate writes it: rule ids
        in order, each once. A rule past the limit even alone is asked of the interpreter; None
        where one gives no answer (the interpreter then answers for them all, naming an error)."""
        assert self._vm is not None
        parts = []
        interpreter: Any = None
        for rule_id, package in sorted({(r.id, r.package) for r in self._agg_rules(agg) or ()}):
            try:
                raw: str = self._vm.execute_entry_point(rule_entry(package))
            except Exception:
                if interpreter is None:
                    interpreter = self._interpreter()
                    interpreter.set_input_json(text)
                try:
                    raw = interpreter.eval_rule_as_json(rule_entry(package))
                except Exception:
                    return None
            if _VM_UNDEFINED in raw:
                return None
            parts.append(f"{orjson.dumps(rule_id).decode()}:{raw}")
        return "{" + ",".join(parts) + "}"

    def compiled_json(
        self, kind: str, text: str, *, bounded: bool = False, raw: bytes | None = None
    ) -> str | None:
        """What :meth:`evaluate_json` finds for ``kind``, as the compiled VM's own JSON text (rule
        id -> violations, which ``violations_of`` reads), when the VM alone judges it: no rule of a
        policy directory reads the kind and the VM answers. None otherwise (then ask
        :meth:`evaluate_json`). The engine process sends this text to the webhook unparsed.
        ``bounded``: one VM run, stopped at its instruction limit, and never the interpreter (the
        webhook's event loop thread). ``raw``: the text as UTF-8 (:meth:`evaluate_json`)."""
        if threading.get_ident() != self._owner:
            return self._for_this_thread().compiled_json(kind, text, bounded=bounded, raw=raw)
        if not self.library_only or self._custom_reads(kind):
            return None
        agg = self._aggregate(kind, text if raw is None else raw)
        if not self._agg_rules(agg):
            return "{}"  # no bundled rule reads the kind (or the input)
        return self._compiled_text(agg, text, bounded=bounded)

    def evaluate_interpreted(
        self, agg: str, rules: list[Rule], text: str, package: str = AGG_PACKAGE
    ) -> list[Violation]:
        """The tree-walking interpreter's answer (the reference the VM is tested against)."""
        engine = self._interpreter()
        engine.set_input_json(text)
        try:
            raw = engine.eval_rule_as_json(agg_entry(agg, package))
        except Exception:
            # One broken rule must not hide the others: evaluate one by one to name the culprit.
            return self._evaluate_each(rules)
        results = orjson.loads(raw) or {}
        return violations_of(self.library.rules, results)

    def _evaluate_each(self, rules: list[Rule]) -> list[Violation]:
        out: list[Violation] = []
        errors = []
        for rule in rules:
            try:
                raw = self._interpreter().eval_rule_as_json(rule_entry(rule.package))
            except Exception as exc:
                errors.append(f"{rule.id}: {evaluation_message(exc)}")
                continue
            out.extend(violations_of(self.library.rules, {rule.id: orjson.loads(raw) or []}))
        if errors:
            raise RuleEvaluationError("; ".join(errors))
        return out

    def clone(self) -> EmbeddedEngine:
        return EmbeddedEngine(self.library, {}, self.enabled, _clone_of=self)
