"""One row per problem in the reports people read (table, Markdown, HTML).

What one object's one mistake triggers is shown once: the same rule firing several times on an
object (a metadata endpoint per address, a token per escalation-capable permission, a host path per
volume) and the rules of one *family* firing together (a `*/*/*` ClusterRole trips wildcards,
Secrets, pods, PersistentVolumes, nodes/proxy, escalate, impersonate … all at once) fold into one
:class:`Group` that lists them. The machine-read reports (JSON, SARIF, JUnit, PolicyReports) and the
exit code keep every finding and every rule id, so exceptions, PSA parity and counts stay exact; a
group only changes how many rows a person reads.

A group never mixes objects, files, pod templates or waived with active findings. Its severity and
action are its members' strongest; its location the first member's. The same object written in
several files (Volcano's installer and its two variants with admission policies added; a chart and
its committed render into the same namespace) finds the same problems in each: such a group is one
row, naming the other files where it is (``elsewhere``). So is a problem of every workload of a
namespace whose fix is one object for the namespace (no egress NetworkPolicy: :data:`NAMESPACE_WIDE`),
naming the other workloads, and what a run could not check (placeholder images: :data:`RUN_WIDE`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from stockade.policies.model import UNKNOWN_PREFIX, Action, Finding, Severity
from stockade.scanner.reports.names import shown_at

#: rules that describe one mistake together, by family (a rule outside every family is its own)
FAMILIES: dict[str, str] = {
    # what a Role or ClusterRole grants: one row per role, listing the capabilities
    **{f"STK-RBAC-{n:03d}": "role-permissions" for n in range(1, 16)},
    # the Pod Security Standards (baseline and restricted), the forbidden host paths and the writable
    # root filesystem: one row per pod template, listing every control it fails (a hostPath volume
    # fails three of them; KServe's runtimes had a readOnlyRootFilesystem row beside each PSS row)
    **{f"STK-POD-{n:03d}": "pod-security" for n in (*range(1, 13), *range(101, 107), 201, 202)},
    # the image references: registry, tag, digest, pull policy
    **{f"STK-IMG-{n:03d}": "images" for n in range(1, 5)},
    # missing requests and limits
    **{f"STK-RES-{n:03d}": "resources" for n in range(1, 4)},
    # the ServiceAccount a pod template runs as and the token it mounts: a template that names no
    # account runs as "default" with its token mounted (two rows per Ray head and worker group before)
    **{f"STK-SA-{n:03d}": "service-account" for n in (1, 2, 4, 5)},
}
#: lines of a group's text before "… and N more"
MAX_LINES = 6
#: characters of one message before it is cut (the JSON and SARIF reports keep it whole)
MAX_MESSAGE = 300
#: other files named on a row before "and N more"
MAX_ELSEWHERE = 3


@dataclass(frozen=True)
class Group:
    """Findings on one object that are one problem; `findings[0]` is the most serious."""

    findings: tuple[Finding, ...]
    #: the primary findings of the same group in other files: an object of the same name with the
    #: same findings (a chart and its committed render; or two examples that share a name, lws'
    #: GPU and TPU vLLM: "the same name", never "the same object", which the findings cannot tell)
    elsewhere: tuple[Finding, ...] = ()

    @property
    def primary(self) -> Finding:
        return self.findings[0]

    @property
    def severity(self) -> Severity:
        return self.primary.rule.severity

    @property
    def action(self) -> Action:
        return max((f.action for f in self.findings), key=lambda a: a.rank)

    @property
    def rule_ids(self) -> tuple[str, ...]:
        """Every rule id of the group, the primary's first."""
        seen = dict.fromkeys(f.rule.id for f in self.findings)
        return tuple(seen)

    @property
    def line(self) -> int | None:
        lines = [f.line for f in self.findings if f.line]
        return min(lines) if lines else None

    def rule_label(self) -> str:
        """`STK-RBAC-006`, or `STK-RBAC-006 +11` when other rules are folded in."""
        ids = self.rule_ids
        return ids[0] if len(ids) == 1 else f"{ids[0]} +{len(ids) - 1}"

    def lines(self) -> list[str]:
        """The primary finding's message, then what else the group holds: for one rule its other
        messages; for several, each other rule by its title (with how often it fired); last, the
        other files where the same group is."""
        return self._lines() + self._elsewhere()

    def _elsewhere(self) -> list[str]:
        if not self.elsewhere:
            return []
        same = all(f.resource == self.primary.resource for f in self.elsewhere)
        # an Azure resource whose name only the deployment decides is no known object: resources of
        # several templates named so are not "the same object", only the same findings
        unnamed = same and str(self.primary.resource.name).startswith(UNKNOWN_PREFIX)
        places = [_place(f, with_object=not same) for f in self.elsewhere]
        more = len(places) - MAX_ELSEWHERE
        what = "files" if same else "workloads"
        text = ", ".join(places[:MAX_ELSEWHERE]) + (f" and {more} more {what}" if more > 0 else "")
        if unnamed:
            return [f"the same findings on resources the deployment names, in {text}"]
        return [f"the same name and findings in {text}" if same else f"the same for {text}"]

    def _lines(self) -> list[str]:
        out = [_cut(self.primary.message)]
        ids = self.rule_ids
        if len(ids) == 1:
            for f in self.findings[1:]:
                text = _cut(f.message)
                if text not in out:
                    out.append(text)
        else:
            fired: dict[str, int] = {}
            titles: dict[str, str] = {}
            for f in self.findings[1:]:
                fired[f.rule.id] = fired.get(f.rule.id, 0) + 1
                titles[f.rule.id] = f.rule.title
            for rule_id, n in fired.items():
                if rule_id == ids[0]:
                    out.append(f"and {n} more {rule_id}")
                else:
                    out.append(f"also {rule_id}: {titles[rule_id]}" + (f", {n} times" if n > 1 else ""))
            return out  # one line per rule: at most the family's size
        if len(out) > MAX_LINES:
            rest = len(out) - (MAX_LINES - 1)
            out = [*out[: MAX_LINES - 1], f"… and {rest} more (the JSON and SARIF reports list them)"]
        return out

    def message(self) -> str:
        return "\n".join(self.lines())


def _place(f: Finding, *, with_object: bool) -> str:
    where = shown_at(f.file, f.line)
    if not with_object:
        return where
    return f"{f.resource.display()} ({where})" if where else f.resource.display()


def _cut(message: str) -> str:
    if len(message) <= MAX_MESSAGE:
        return message
    cut = message.rfind(" ", 0, MAX_MESSAGE)
    kept = message[: cut if cut > MAX_MESSAGE // 2 else MAX_MESSAGE]
    return f"{kept} … ({len(message)} characters in all)"


def _key(f: Finding) -> tuple[object, ...]:
    ref = f.resource
    return (
        f.file,
        ref.cluster,
        ref.api_version.split("/")[0] if "/" in ref.api_version else "",
        ref.kind,
        ref.namespace,
        ref.name,
        f.template,
        FAMILIES.get(f.rule.id, f.rule.id),
        f.exception.name if f.exception is not None else None,
    )


def group(findings: Iterable[Finding]) -> list[Group]:
    """`findings` (in report order) folded into groups, in the order of each group's first finding;
    a group found again in another file is named on the first one's row."""
    buckets: dict[tuple[object, ...], list[Finding]] = {}
    for f in findings:
        buckets.setdefault(_key(f), []).append(f)
    out: list[Group] = []
    first: dict[tuple[object, ...], int] = {}
    for key, members in buckets.items():
        ordered = sorted(
            members, key=lambda f: (-f.rule.severity, -f.action.rank, f.rule.id, f.line or 0, f.message)
        )
        g = Group(tuple(ordered))
        said = tuple((f.rule.id, f.action, f.path, f.message) for f in g.findings)
        # the same content from another file; from a render of this file into another namespace
        same = (key[1:], said)
        rendered = ("rendered", *key[:4], *key[5:], said) if key[0] is not None else None
        per_namespace = _namespace_wide(g, key)
        # the instances of one Azure resource declaration (an ARM copy loop): one row naming the others
        instances = (
            ("instances", *key[:5], *key[6:], g.line, said)
            if "/" in str(g.primary.resource.kind) and g.line is not None
            else None
        )
        at = first.get(per_namespace) if per_namespace is not None else None
        if at is None and rendered is not None:
            at = first.get(rendered)
        if at is None and instances is not None:
            at = first.get(instances)
        if at is None:
            at = first.get(same)
            if at is not None and (out[at].primary.file == g.primary.file or g.primary.file is None):
                at = None
        if at is None:
            for alias in (same, per_namespace, rendered, instances):
                if alias is not None:
                    first.setdefault(alias, len(out))
            out.append(g)
        else:
            out[at] = replace(out[at], elsewhere=(*out[at].elsewhere, g.primary))
    return out


#: rules whose finding is the same for every workload of a namespace, and whose fix is one object
#: for the namespace (a default-deny egress NetworkPolicy): one row per namespace, naming the others
NAMESPACE_WIDE = frozenset({"STK-NET-001"})
#: rules that say what a run could not check rather than what is wrong (an image field holding an
#: operator's placeholder, FILLED BY THE OPERATOR): one row for the run, naming the others
RUN_WIDE = frozenset({"STK-IMG-005"})


def _namespace_wide(g: Group, key: tuple[object, ...]) -> tuple[object, ...] | None:
    """The key of a group (its bucket's ``key``) that is one row per namespace
    (:data:`NAMESPACE_WIDE`) or per run (:data:`RUN_WIDE`), else None."""
    f = g.primary
    if f.rule.id in RUN_WIDE and all(m.rule.id == f.rule.id for m in g.findings):
        return ("run", f.rule.id, f.action, key[-1])
    if f.rule.id not in NAMESPACE_WIDE or any(
        (m.rule.id, m.message) != (f.rule.id, f.message) for m in g.findings
    ):
        return None
    ref = f.resource
    return ("namespace", ref.cluster, ref.namespace, f.rule.id, f.action, f.message, key[-1])
