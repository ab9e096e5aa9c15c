"""A running OPA server as the engine (`--engine opa --opa-url URL`), through `opa-python-client`.

The server is expected to hold the bundle `stockade policy bundle` writes for the same library and
configuration (policies/engines/bundle.py). The questions are the embedded engine's, asked over OPA's Data
API (`POST /v1/data/<path>` with `{"input": …}`, answered `{"result": …}`):

- `stockade_agg/<kind>/results` with stockade's input: `{rule id: [violation, …]}`, exactly the
  aggregating query the embedded engine runs, so the violations are built by the same code;
- for each Gatekeeper constraint whose match selects the object (decided here, as in the embedded
  engine), `<template package>/violation` with `{"review", "parameters"}`.

A result that is absent (undefined) means no violations; an HTTP or connection error is a
RuleEvaluationError naming the server and the query, so the gates report it like any evaluation
failure (the webhook fails closed on it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from opa_client import OpaClient  # type: ignore[import-untyped]

from stockade.policies.engines.base import RuleEvaluationError
from stockade.policies.engines.library import Library, agg_name, group_by_kind, violations_of
from stockade.policies.frameworks.gatekeeper import cel_violations, matches, review_of
from stockade.policies.frameworks.vap import VapEngine
from stockade.policies.model import Rule, Violation

AGG_ROOT = "stockade_agg"


def client_for(url: str, *, timeout: float = 5.0, token: str | None = None) -> OpaClient:
    """An OpaClient for `http(s)://host:port` (OPA's API version path is the client's own)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--opa-url {url!r}: expected http(s)://HOST:PORT")
    port = parts.port or (443 if parts.scheme == "https" else 8181)
    return OpaClient(
        host=parts.hostname, port=port, ssl=parts.scheme == "https", timeout=timeout, token=token, retries=0
    )


class RemoteOpaEngine:
    """Engine protocol over OPA's REST API; the rule catalogue is the local library's."""

    def __init__(self, library: Library, url: str, enabled: set[str] | None = None, **client: Any) -> None:
        self.library = library
        self.url = url
        self.enabled = frozenset(library.rules if enabled is None else enabled)
        own = [r for r in library.rules.values() if r.id in self.enabled and not library.is_external(r.id)]
        vap_rules = {r.id: r for r in library.rules.values() if r.id in self.enabled and library.is_vap(r.id)}
        # CEL has no OPA side: ValidatingAdmissionPolicies run in-process, as with the embedded engine
        self._vap = VapEngine(library.vap, vap_rules) if vap_rules else None
        self._by_kind = group_by_kind(own)
        self._constraints = [c for c in library.gatekeeper.constraints if c.rule_id in self.enabled]
        self._client_options = client
        self._client = client_for(url, **client)

    def rules_for(self, kind: str) -> list[Rule]:
        own = self._by_kind.get(kind) or self._by_kind.get("*", [])
        vap = [r for r in self._vap.rules.values() if r.applies_to(kind)] if self._vap is not None else []
        return (
            own
            + [
                self.library.rules[c.rule_id]
                for c in self._constraints
                if self.library.rules[c.rule_id].applies_to(kind)
            ]
            + vap
        )

    def _query(self, path: str, inp: Mapping[str, Any]) -> Any:
        where = f"OPA at {self.url}: POST /v1/data/{path}"
        try:
            # strict-builtin-errors: a builtin's error (to_number("x"), an invalid regex) is an error
            # of the query, as on the embedded engine, not an undefined value that passes the rule
            answer = self._client.query_rule(
                input_data=dict(inp),
                package_path=path,
                query_params={"strict-builtin-errors": "true"},
            )
        except requests.exceptions.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else "error"
            raise RuleEvaluationError(f"{where}: HTTP {status}") from None
        except requests.exceptions.Timeout:
            raise RuleEvaluationError(f"{where}: timed out") from None
        except requests.exceptions.ConnectionError:
            raise RuleEvaluationError(f"{where}: cannot connect") from None
        except ValueError as exc:  # a body that is not JSON
            raise RuleEvaluationError(f"{where}: not JSON ({exc})") from None
        if not isinstance(answer, Mapping):
            raise RuleEvaluationError(f"OPA at {self.url}: POST /v1/data/{path}: not a JSON object")
        return answer.get("result")

    def evaluate(
        self, kind: str, input: Mapping[str, Any], *, library: bool = True, constraints: bool = True
    ) -> list[Violation]:
        agg = kind if kind in self._by_kind else "*"
        found: list[Violation] = []
        if self._by_kind.get(agg) and library:
            result = self._query(f"{AGG_ROOT}/{agg_name(agg)}/results", input)
            found = violations_of(self.library.rules, result or {})
        obj = input.get("object") or {}
        labels = (input.get("namespace") or {}).get("labels")
        for c in self._constraints if constraints else ():
            if not matches(c.match, obj, labels):
                continue
            template = self.library.gatekeeper.templates[c.kind]
            rule = self.library.rules[c.rule_id]
            unsupported = template.unsupported_violation(rule)
            if unsupported is not None:  # not in the bundle: said as the embedded engine says it
                found.append(unsupported)
                continue
            if not template.rego:  # CEL: no OPA side, evaluated in-process as the embedded engine does
                found += cel_violations(template, c, rule, review_of(input), input.get("namespace") or {})
                continue
            path = template.package.removeprefix("data.").replace(".", "/") + "/violation"
            for item in self._query(path, {"review": review_of(input), "parameters": c.parameters}) or []:
                if isinstance(item, Mapping):
                    details = item.get("details")
                    found.append(
                        Violation(
                            rule,
                            str(item.get("msg") or rule.title),
                            (),
                            details if isinstance(details, Mapping) else {},
                        )
                    )
        if self._vap is not None and constraints:
            found = found + self._vap.evaluate(input)
        return found

    def set_inventory(self, objects: Iterable[Mapping[str, Any]], *, decisive: bool = False) -> None:
        """VAP params and RBAC objects (the VAPs run in-process). Gatekeeper's `data.inventory` lives
        in the OPA server's data, which stockade does not write."""
        if self._vap is not None:
            self._vap.set_objects(objects, decisive=decisive)

    def clone(self) -> RemoteOpaEngine:
        return RemoteOpaEngine(self.library, self.url, set(self.enabled), **self._client_options)
