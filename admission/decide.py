"""AdmissionReview request -> findings -> AdmissionReview response.

The decision is the scan's decision: the same :class:`Evaluator` (rules, actions, overrides,
exceptions) evaluates the same input shape, with namespace labels and facts taken from the
inventory cache instead of the scanned set; suppression annotations count only where
`suppressions.admission` allows. Only the presentation differs:

- `deny` findings reject the request; `status.message` lists every denying rule id and message;
- `warn` findings become `warnings` (kubectl prints them);
- `audit` findings become `auditAnnotations` (recorded in the API server's audit log).

DELETE and CONNECT carry no object to judge and are allowed, as are subresources other than
`pods/ephemeralcontainers` (which adds containers to a running Pod, so Pod Security applies), and
an UPDATE that changes nothing stockade judges (:func:`unchanged`: its object differs from the old
one only in `status` and the metadata the API server maintains). A controller that writes a custom
resource's status through the resource itself (Argo Workflows' controller at every step of a
workflow; CRDs without a status subresource) is not slowed by a full evaluation at each write, and
an object admitted before (or created while the webhook was not installed) keeps progressing: its
judgement is the audit's, as Kyverno's `allowExistingViolations` leaves it. Any change to what the
rules read (spec, labels, annotations, data) is judged as a CREATE is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor

from stockade.admission.review import AdmissionRequest, AdmissionResponse, Status
from stockade.policies.config.waivers import SuppressionBook
from stockade.policies.engines.base import EngineInput, evaluate_inputs
from stockade.policies.engines.process import ProcessEngine
from stockade.policies.evaluate import Evaluator, FactsSource, namespace_for
from stockade.policies.folding import fold
from stockade.policies.model import (
    Action,
    Finding,
    Operation,
    Origin,
    Resource,
    Violation,
    format_path,
    is_mapping,
)

#: Kubernetes truncates each warning beyond this length; keep the rule id and start of the message.
MAX_WARNING_CHARS = 256
#: total budget for warnings, well under the API server's limits
MAX_TOTAL_CHARS = 4096
MAX_ANNOTATION_CHARS = 1024
#: a denial's status.message, at most (each line is capped like a warning, then whole lines are kept)
MAX_DENY_CHARS = 4096
MAX_DENY_LINE_CHARS = 1024
EVALUATED_SUBRESOURCES = frozenset({"", "ephemeralcontainers"})


def resource_of(request: AdmissionRequest, cluster: str | None = None) -> Resource | None:
    """The object to judge, with the request's namespace filled in (absent in many CREATE bodies).

    `cluster` is the webhook's own cluster (`--cluster`): overrides and exceptions that name
    clusters match on it, as they do on the context name in an audit."""
    obj = request.object
    if obj is None:
        return None
    md = obj.get("metadata")
    md = dict(md) if is_mapping(md) else {}
    if request.namespace and not md.get("namespace"):
        md["namespace"] = request.namespace
    if request.name and not md.get("name"):
        md["name"] = request.name
    return Resource({**obj, "metadata": md}, Origin(cluster=cluster))


def judged(request: AdmissionRequest) -> bool:
    """Whether the request carries an object stockade judges."""
    return (
        request.operation not in ("DELETE", "CONNECT")
        and request.sub_resource in EVALUATED_SUBRESOURCES
        and not unchanged(request)
    )


#: metadata the API server maintains (and `status`): an UPDATE changing only these changes nothing judged
_MAINTAINED = frozenset(
    {"resourceVersion", "generation", "managedFields", "uid", "creationTimestamp", "selfLink"}
)


def unchanged(request: AdmissionRequest) -> bool:
    """Whether an UPDATE leaves everything the rules read as it was: the object and the old object
    are equal once `status` and the metadata the API server maintains are set aside."""
    new, old = request.object, request.old_object
    if request.operation != "UPDATE" or not isinstance(new, Mapping) or not isinstance(old, Mapping):
        return False
    return _judged_part(new) == _judged_part(old)


def _judged_part(obj: Mapping[str, object]) -> dict[str, object]:
    out = {k: v for k, v in obj.items() if k != "status"}
    md = obj.get("metadata")
    if isinstance(md, Mapping):
        out["metadata"] = {k: v for k, v in md.items() if k not in _MAINTAINED}
    return out


class Judgement:
    """One request's evaluation around the engine's: what the engine is given (``inputs``: none when
    the request carries nothing to judge, or its object is out of scope), and the findings made of
    what it answers. The webhook waits for the engine in its event loop between the two
    (:func:`evaluate_async`); :func:`evaluate` does all three in one call."""

    def __init__(
        self, request: AdmissionRequest, evaluator: Evaluator, facts: FactsSource, cluster: str | None = None
    ) -> None:
        self.evaluator = evaluator
        self.resource = resource_of(request, cluster) if judged(request) else None
        self.inputs: list[EngineInput] = []
        if self.resource is not None:
            self.inputs = evaluator.scoped_inputs(
                self.resource,
                operation=Operation(request.operation),
                namespace=namespace_for(self.resource, facts),
                source=facts,
                old_object=request.old_object,
                user_info=request.user_info.model_dump(by_alias=True),
            )

    def findings(self, violations: Sequence[Violation]) -> list[Finding]:
        """The findings of the engine's violations for ``inputs``."""
        if self.resource is None:
            return []
        evaluator = self.evaluator
        findings = evaluator.decide(self.resource, violations)
        # stockade.io/ignore-<RULE> annotations: only where `suppressions.admission` allows (by default
        # nowhere), since whoever submits the object writes them; one not honoured says so in the message
        book = SuppressionBook(evaluator.config.suppressions, "admission", evaluator.exceptions.today)
        return fold(book.apply(self.resource, findings))


def evaluate(
    request: AdmissionRequest, evaluator: Evaluator, facts: FactsSource, cluster: str | None = None
) -> list[Finding]:
    """The findings for a request (none for requests that carry nothing to judge)."""
    job = Judgement(request, evaluator, facts, cluster)
    return job.findings(evaluate_inputs(evaluator.engine, job.inputs) if job.inputs else [])


async def evaluate_async(
    request: AdmissionRequest,
    evaluator: Evaluator,
    engine: ProcessEngine,
    facts: FactsSource,
    cluster: str | None = None,
    *,
    judge_on: Executor | None = None,
) -> list[Finding]:
    """:func:`evaluate` with the evaluator's engine process, waited for in the running event loop.
    With ``judge_on``, the inputs (and their facts) are built on that executor's thread: for a large
    object, whose facts take long enough that the loop would stall (on a thread, the interpreter
    still switches to the loop every few milliseconds)."""
    if judge_on is None:
        job = Judgement(request, evaluator, facts, cluster)
    else:
        loop = asyncio.get_running_loop()
        job = await loop.run_in_executor(judge_on, Judgement, request, evaluator, facts, cluster)
    return job.findings(await engine.evaluate_inputs_async(job.inputs) if job.inputs else [])


def _line(f: Finding) -> str:
    where = f" ({format_path(f.path)})" if f.path else ""
    return f"{f.rule.id}: {f.message}{where}"


def respond(uid: str, findings: list[Finding], *, fail_open: bool = False) -> AdmissionResponse:
    """The answer for a request's findings. A rule that could not be evaluated (``Finding.error``)
    denies, unless ``fail_open``: then that rule alone is skipped, with a warning, and every other
    rule still decides."""
    active = [f for f in findings if f.exception is None]
    skipped = [f for f in active if f.error and fail_open]
    active = [f for f in active if not (f.error and fail_open)]
    denied = [f for f in active if f.action is Action.DENY]
    warned = [f for f in active if f.action is Action.WARN]
    audited = [f for f in active if f.action is Action.AUDIT]
    status = None
    if denied:
        lines = _budget([f"- {_line(f)[:MAX_DENY_LINE_CHARS]}" for f in denied], MAX_DENY_CHARS)
        message = "stockade denied the request:\n" + "\n".join(lines)
        status = Status(code=403, reason="Forbidden", message=message)
    lines = [f"{f.rule.id} skipped (failure_mode open): {f.message}" for f in skipped]
    warnings = _budget([line[:MAX_WARNING_CHARS] for line in lines + [_line(f) for f in warned]])
    annotations: dict[str, str] = {}
    for f in audited:  # one annotation per rule (keys must be qualified names), values capped
        key = f.rule.id.lower()
        value = f"{annotations[key]}; {f.message}" if key in annotations else f.message
        annotations[key] = value[:MAX_ANNOTATION_CHARS]
    return AdmissionResponse(
        uid=uid,
        allowed=not denied,
        status=status,
        warnings=warnings or None,
        audit_annotations=annotations or None,
    )


def _budget(items: list[str], budget: int = MAX_TOTAL_CHARS) -> list[str]:
    """Keep whole items until the total budget is used, then say how many were left out."""
    out: list[str] = []
    used = 0
    for i, item in enumerate(items):
        if used + len(item) > budget:
            out.append(f"... and {len(items) - i} more")
            break
        out.append(item)
        used += len(item)
    return out


def denial(uid: str, message: str) -> AdmissionResponse:
    """A denial decided before evaluation (an oversize or malformed object): in either failure mode."""
    return AdmissionResponse(
        uid=uid,
        allowed=False,
        status=Status(code=403, reason="Forbidden", message=message[:MAX_DENY_CHARS]),
    )


def failure(uid: str, reason: str, *, fail_open: bool) -> AdmissionResponse:
    """The answer when stockade could not decide: deny (fail closed) unless configured open."""
    message = f"stockade could not evaluate the request: {reason}"
    if fail_open:
        return AdmissionResponse(uid=uid, allowed=True, warnings=[message[:MAX_WARNING_CHARS]])
    return AdmissionResponse(
        uid=uid, allowed=False, status=Status(code=500, reason="InternalError", message=message)
    )
