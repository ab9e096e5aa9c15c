"""One finding per problem: what an active finding already says is folded into it, in every gate.

A privileged container also lacks ``allowPrivilegeEscalation: false`` (which the API server refuses
next to ``privileged: true``), ``capabilities.drop: [ALL]`` (it holds every capability anyway), a
seccomp profile (the runtime does not apply one to it) and a read-only root filesystem; a hostPath
volume that exposes a forbidden host path is also a hostPath volume; a hostNetwork pod's host port
is its container port anyway, and its egress reaches the metadata endpoint whatever NetworkPolicies
say; a pull policy asked for because of a moving tag is settled with the tag; a container with no
memory limit has no memory request it could default to; a wildcard in a role rule whose sharp grant
(Secrets, pods/exec …) another rule reports adds nothing a reviewer acts on. Reported one by one
these are true but repeated: noise that hides the finding that matters. Here each such *member*
finding is removed and listed in its *primary*'s ``details["folded"]`` (rule, message, field), and
the primary's message names the folded rules.

The decision is kept exact: a member is folded only into a primary on the same object, pod template
and container (or volume, or role rule), covered by the same waiver or by none (an exception, a
suppression annotation, a baseline), and at least as strong (action and severity), so the exit code,
the webhook's verdict, ``--fail-on-severity`` and every report's deny count are what they were. A
waived primary takes no active member: once a privileged container is accepted, its
restricted-profile gaps are reported as they are (Kyverno's per-control exclusions behave the same).
Evaluation errors never fold. The engine's own output
(:meth:`~stockade.policies.evaluate.Evaluator.decide`) keeps every control, so Pod Security
Standards parity per control is unchanged; the gates fold after exceptions, suppressions and the
baseline are applied, and a baseline records each member on its own (fixing the primary does not
make its members new).

The same rule firing more than once on the same field of one object and pod template (one metadata
address after another on one egress rule), or, for the RBAC capability rules, anywhere in one Role
or ClusterRole (pods created through Deployments in one rule and Jobs in another), is folded the
same way into its first finding.

Owns: the fold table (:data:`FOLDS`) and :func:`fold`. May import: stockade.policies.model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from stockade.policies.model import Finding, JSONPath, format_path

CONTAINER_LISTS = frozenset({"containers", "initContainers", "ephemeralContainers"})

#: a finding's scope key (part of its object it is about), or None when it has no such part
Scope = Callable[[Finding], JSONPath | None]


def _through(names: frozenset[str]) -> Scope:
    """The path up to and including the list index after the first of `names` (a container, a
    volume, a role rule)."""

    def scope(f: Finding) -> JSONPath | None:
        path = f.path
        for i in range(len(path) - 1):
            if path[i] in names and isinstance(path[i + 1], int):
                return tuple(path[: i + 2])
        return None

    return scope


def _pod_spec(f: Finding) -> JSONPath | None:
    """The pod spec a finding is in (``spec.template.spec``): the path before its container list, or
    before its last field when it is about the pod spec itself."""
    path = f.path
    for i, part in enumerate(path):
        if part in CONTAINER_LISTS:
            return tuple(path[:i])
    return tuple(path[:-1]) if path else None


container = _through(CONTAINER_LISTS)
volume = _through(frozenset({"volumes"}))
role_rule = _through(frozenset({"rules"}))


@dataclass(frozen=True)
class Fold:
    """`members` on the same `scope` as an active `primary` finding are folded into it."""

    primary: frozenset[str]
    members: frozenset[str]
    scope: Scope
    why: str
    #: only primaries this accepts (STK-POD-002 on hostNetwork, not hostPID)
    when: Callable[[Finding], bool] = lambda f: True


FOLDS: tuple[Fold, ...] = (
    Fold(
        frozenset({"STK-POD-003"}),
        frozenset(
            {
                "STK-POD-004",
                "STK-POD-102",
                "STK-POD-103",
                "STK-POD-104",
                "STK-POD-105",
                "STK-POD-106",
                "STK-POD-202",
            }
        ),
        container,
        "a privileged container holds every capability, runs without seccomp and cannot set "
        "allowPrivilegeEscalation=false: these controls are settled by removing privileged",
    ),
    Fold(
        frozenset({"STK-POD-201"}),
        frozenset({"STK-POD-005", "STK-POD-101"}),
        volume,
        "the same hostPath volume, reported with the sensitive host path it exposes",
    ),
    Fold(
        frozenset({"STK-POD-002"}),
        frozenset({"STK-POD-006"}),
        _pod_spec,
        "in a hostNetwork pod every container port is a host port",
        when=lambda f: bool(f.path) and f.path[-1] == "hostNetwork",
    ),
    Fold(
        frozenset({"STK-POD-002"}),
        frozenset({"STK-NET-006"}),
        lambda f: (),
        "a hostNetwork pod uses the node's network, which no NetworkPolicy governs: it reaches the "
        "metadata endpoint whatever its egress rules say",
        when=lambda f: bool(f.path) and f.path[-1] == "hostNetwork",
    ),
    Fold(
        frozenset({"STK-IMG-002"}),
        frozenset({"STK-IMG-004"}),
        container,
        "pinning the moving tag settles the pull policy that only a moving tag needs",
    ),
    Fold(
        frozenset({"STK-RES-001"}),
        frozenset({"STK-RES-003"}),
        container,
        "a memory limit is also the memory request when none is set",
    ),
    Fold(
        frozenset({f"STK-RBAC-{n:03d}" for n in range(2, 16)}),
        frozenset({"STK-RBAC-001"}),
        role_rule,
        "the wildcard's sharp grant in the same role rule is reported by the primary",
    ),
)


def _whole(f: Finding) -> JSONPath | None:
    return ()


#: rules whose repeats on one part of an object (not only on one field) are one problem: what a
#: Role or ClusterRole grants is one permission set, reported once per capability however many of its
#: rules grant it (`*` in the resources and verbs of one rule, pods created through Deployments in
#: one rule and Jobs in another)
REPEAT_SCOPES: dict[str, Scope] = {f"STK-RBAC-{n:03d}": _whole for n in range(1, 16)}


def _covers(primary: Finding, member: Finding) -> bool:
    """Folding `member` into `primary` changes no verdict: as strong on both counts, and waived by the
    same waiver (or neither waived)."""
    return (
        primary.action.rank >= member.action.rank
        and primary.rule.severity >= member.rule.severity
        and primary.exception == member.exception
    )


def _place(f: Finding) -> tuple[Any, ...]:
    """The object and pod template of a finding, and the waiver covering it (None when active): a
    finding folds only into one covered by the same waiver, so a waived primary never takes an active
    member along, and what a baseline or an exception accepts folds among itself."""
    return (f.resource, f.template, f.file, f.exception)


def fold(findings: Sequence[Finding]) -> list[Finding]:
    """`findings` (of one or more objects, in report order) with what a finding already says folded
    into it; order otherwise kept. Evaluation errors never fold."""
    if len(findings) < 2:
        return list(findings)
    folded: dict[int, list[Finding]] = {}  # primary's index -> its members
    gone: set[int] = set()
    by_rule: dict[tuple[Any, ...], int] = {}
    for i, f in enumerate(findings):
        if f.error:
            continue
        # the same rule on the same field of one object and template (or in one role): one finding
        scope = REPEAT_SCOPES.get(f.rule.id)
        where = scope(f) if scope is not None else None
        key = (_place(f), f.rule.id, where if where is not None else tuple(f.path), f.action)
        first = by_rule.setdefault(key, i)
        if first != i:
            folded.setdefault(first, []).append(f)
            gone.add(i)
    for rule in FOLDS:
        primaries: dict[tuple[Any, ...], int] = {}
        for i, f in enumerate(findings):
            if i in gone or f.error or f.rule.id not in rule.primary or not rule.when(f):
                continue
            where = rule.scope(f)
            if where is not None:
                primaries.setdefault((_place(f), where), i)
        if not primaries:
            continue
        for i, f in enumerate(findings):
            if i in gone or f.error or f.rule.id not in rule.members:
                continue
            where = rule.scope(f)
            p = primaries.get((_place(f), where)) if where is not None else None
            if p is not None and p != i and _covers(findings[p], f):
                # the member and what was already folded into it (its repeats) go to the primary
                folded.setdefault(p, []).extend([f, *folded.pop(i, ())])
                gone.add(i)
    if not gone:
        return list(findings)
    out = []
    for i, f in enumerate(findings):
        if i in gone:
            continue
        members = folded.get(i)
        out.append(_with_members(f, members) if members else f)
    return out


def _with_members(primary: Finding, members: list[Finding]) -> Finding:
    entries = [*primary.details.get("folded", ())] if isinstance(primary.details.get("folded"), list) else []
    for m in members:
        entries.append(
            {"rule": m.rule.id, "message": m.message, "path": format_path(m.path), "details": dict(m.details)}
        )
        nested = m.details.get("folded")  # a member that had folded others: they come along
        if isinstance(nested, list):
            entries.extend(nested)
    others = sorted({m.rule.id for m in members} - {primary.rule.id})
    repeats = [m for m in members if m.rule.id == primary.rule.id]
    said = []
    if others:
        said.append(f"also fails {', '.join(others)} here")
    if len(repeats) == 1:
        said.append(f"also: {repeats[0].message}")
    elif repeats:
        said.append(f"{len(repeats)} more of the same")
    return dataclasses.replace(
        primary,
        message=f"{primary.message} ({'; '.join(said)}: folded into this finding)",
        details={**primary.details, "folded": entries},
    )
