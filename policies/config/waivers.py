"""Waivers: which findings an exception covers, and which exceptions are expired or unused.

An expired exception stops applying the day after its `expires` date, and both expired and unused
exceptions are reported, so waivers cannot quietly outlive their reason.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from stockade.policies.config.settings import ExceptionSpec, glob_match
from stockade.policies.model import ExceptionRef, ResourceRef

Status = Literal["active", "expired", "unused"]


@dataclass(frozen=True, slots=True)
class ExceptionStatus:
    spec: ExceptionSpec
    status: Status
    matched: int


class ExceptionBook:
    """Matches findings to exceptions and counts how often each one was used."""

    def __init__(self, specs: tuple[ExceptionSpec, ...], today: dt.date | None = None) -> None:
        self.today = today or dt.date.today()
        self.specs = specs
        self._live = tuple(s for s in specs if not s.expired(self.today))
        self._used: Counter[str] = Counter()

    def match(self, rule_id: str, resource: ResourceRef, labels: Mapping[str, str]) -> ExceptionRef | None:
        for spec in self._live:
            if not glob_match(spec.rules, rule_id):
                continue
            m = spec.match
            if not (
                glob_match(m.clusters, resource.cluster)
                and glob_match(m.namespaces, resource.namespace)
                and glob_match(m.kinds, resource.kind)
                and glob_match(m.names, resource.name)
                and all(labels.get(k) == v for k, v in m.labels.items())
            ):
                continue
            self._used[spec.name] += 1
            return ExceptionRef(spec.name, spec.owner, spec.reason, spec.expires.isoformat())
        return None

    def statuses(self) -> list[ExceptionStatus]:
        out = []
        for spec in self.specs:
            used = self._used.get(spec.name, 0)
            if spec.expired(self.today):
                status: Status = "expired"
            elif used == 0:
                status = "unused"
            else:
                status = "active"
            out.append(ExceptionStatus(spec, status, used))
        return out
