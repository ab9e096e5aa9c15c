"""`stockade scan`: manifests in, findings out.

All resources are read before any is evaluated, because a Namespace object in the scanned set
supplies the labels (such as the Pod Security level) for the objects in that namespace.

Large trees use worker processes for everything expensive, since regorus holds the GIL and YAML
parsing is CPU-bound:

1. workers parse files and return plain objects with their position (file, document, prefix);
2. this process builds the inventory (namespace index, RBAC graph, ...) from every object;
3. workers forked from this process, so they share what was read and derived without copying it,
   build the rule inputs (facts), evaluate, and resolve the line of every violation by composing
   that file from disk; only the violations come back;
4. this process decides (actions, exceptions, suppression annotations, the baseline), so exception usage
   is counted exactly once.

Where processes cannot be forked, step 3's inputs are built here and sent to the workers.

Small inputs run the same steps in this process, where starting workers would cost more than it saves.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import marshal
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stockade.policies.config.settings import Config
from stockade.policies.config.waivers import SuppressionBook
from stockade.policies.decoding.yamlpos import LazyFile, LazyFileLocator, Span
from stockade.policies.engines.base import EngineInput, RuleEvaluationError, evaluate_inputs
from stockade.policies.evaluate import Evaluator, InventoryFacts, namespace_for
from stockade.policies.facts import inventory_of
from stockade.policies.folding import fold
from stockade.policies.model import (
    InputError,
    JSONPath,
    Operation,
    Origin,
    Resource,
    StaticLocator,
    Violation,
)
from stockade.scanner.notes import scan_notes
from stockade.scanner.result import Result
from stockade.scanner.sources.base import Item, Skipped
from stockade.scanner.sources.files import (
    Chart,
    FileSource,
    bases_to_render,
    failed_render,
    read_file,
    render_chart,
    same_failure,
)

if TYPE_CHECKING:  # worker processes are imported when a scan is large enough to use them
    from concurrent.futures import Executor

    from stockade.scanner.baseline import BaselineMatcher

#: below these sizes, starting worker processes costs more than it saves
PARALLEL_FILES = 40
PARALLEL_OBJECTS = 400
CHUNK = 100


@dataclass(slots=True)
class ScanOptions:
    config: Config = field(default_factory=Config)
    policy_dirs: Sequence[Path] = ()
    workers: int = 1
    #: the cluster the manifests are for (`--cluster`): selects per-cluster settings (sandbox profile,
    #: overrides and exceptions naming clusters) exactly as the webhook and audit of that cluster do
    cluster: str | None = None
    #: `--namespace`: the namespace of namespaced objects that name none, as `kubectl apply -n` does
    namespace: str | None = None
    #: `--baseline`/`--write-baseline`: marks the findings a baseline accepts, records the others
    baseline: BaselineMatcher | None = None


@functools.cache
def _scopes() -> dict[tuple[str, str], bool]:
    """(group, kind) -> namespaced, from the kinds table; built once."""
    from stockade.policies.kinds.api import KINDS, object_kind

    return {(info.group, object_kind(info)): info.namespaced for info in KINDS.values()}


def _namespaced(obj: Mapping[str, Any]) -> bool:
    """Whether an object's kind lives in a namespace (the kinds table; unknown kinds: not assumed)."""
    from stockade.policies.kinds.workloads import group_of

    kind, group = str(obj.get("kind")), group_of(obj.get("apiVersion"))
    if group is not None:
        return _scopes().get((group, kind), False)
    # no apiVersion: the first kind of that name in the table, as before
    return next((ns for (_, k), ns in _scopes().items() if k == kind), False)


def default_namespaces(resources: Sequence[Resource], namespace: str | None) -> list[str]:
    """Give namespace-less namespaced objects `namespace` (`--namespace`, kubectl's defaulting); without
    it, those objects as "file:line Kind/name" (judged as in "default", where kubectl would put them)."""
    unnamed = []
    for r in resources:
        if r.namespace is not None or not _namespaced(r.obj):
            continue
        if namespace is not None:
            md = r.obj.setdefault("metadata", {})
            if isinstance(md, dict):
                md["namespace"] = namespace
                continue
        unnamed.append(f"{_at(r)} {r.kind}/{r.name}")
    return unnamed


def _at(r: Resource) -> str:
    """Where scan notes say an object is: "file:line", or the file of a JSON one (no lines)."""
    return f"{r.origin.file}:{r.origin.line}" if r.origin.line is not None else str(r.origin.file)


def can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


class Workers:
    """A process pool started on first use and shared by both parallel steps (and the audit's)."""

    def __init__(self, options: ScanOptions) -> None:
        self.options = options
        self._pool: Executor | None = None

    def get(self) -> Executor:
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # fork starts in milliseconds with everything imported; elsewhere use the default.
            ctx = multiprocessing.get_context("fork") if can_fork() else None
            self._pool = ProcessPoolExecutor(
                max_workers=self.options.workers,
                mp_context=ctx,
                initializer=_init_worker,
                initargs=(self.options.config, tuple(self.options.policy_dirs)),
            )
        return self._pool

    def fork(self, state: Forked) -> Executor:
        """A pool forked now, whose processes see `state` (and all this process holds) as it is: the
        pool used so far is shut down first, so that no thread of it runs during the fork."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        global _forked
        self.close()
        _forked = state
        self._pool = ProcessPoolExecutor(
            max_workers=self.options.workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=gc.set_threshold,
            initargs=BATCH_GC_THRESHOLD,
        )
        return self._pool

    def close(self) -> None:
        global _forked
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        _forked = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# A large scan keeps every parsed object alive (about a million for 2,000 manifests), and every
# garbage collection the parser's and composer's allocations trigger walks all of them: measured on
# 2,000 objects, that was a third of the evaluation phase. Batch runs therefore collect less often,
# and freeze what was read (it lives until the end of the run anyway).
BATCH_GC_THRESHOLD = (50_000, 20, 100)


@contextlib.contextmanager
def batch_gc() -> Iterator[None]:
    old = gc.get_threshold()
    gc.set_threshold(*BATCH_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def run_scan(
    files: FileSource,
    others: Sequence[Iterable[Item]],
    evaluator: Evaluator,
    options: ScanOptions,
    *,
    version: str,
    progress: Callable[[int], None] | None = None,
) -> Result:
    """Read every source, then evaluate: the whole `stockade scan` pipeline."""
    with batch_gc(), Workers(options) as workers:
        items: list[Item] = list(files.stdin_items())
        paths: list[Path] = []
        found: list[Item | Chart] = []
        for target in files.targets():
            if isinstance(target, InputError | Skipped | Chart):
                found.append(target)
            else:
                paths.append(target)
        items.extend(_rendered(found, options.workers))
        files.files_read += len(paths)
        if options.workers > 1 and len(paths) >= PARALLEL_FILES:
            for plain in workers.get().map(_read_plain, paths, chunksize=8):
                items.extend(_from_plain(p) for p in _unpacked(plain))
        else:
            for path in paths:
                items.extend(read_file(path))
        for source in others:
            items.extend(source)
        resources = [i for i in items if isinstance(i, Resource)]
        errors = [i for i in items if isinstance(i, InputError)]
        gc.freeze()
        result = scan(
            resources,
            evaluator,
            options,
            version=version,
            errors=errors,
            files=files.files_read,
            progress=progress,
            workers=workers,
        )
        result.skipped = [i for i in items if isinstance(i, Skipped)]
        result.objects_read = len(resources)
        return result


def _rendered(found: Sequence[Item | Chart], workers: int) -> list[Item]:
    """``found`` in its order, each chart replaced by what it renders to. With several workers, the
    renders run side by side on threads (each waits on `kubectl kustomize` or `helm template`, and
    decodes while another's tool runs); every thread has ended when this returns, before any worker
    process is forked."""
    charts = [t for t in found if isinstance(t, Chart)]
    renders = _render_all(charts, workers)
    out = [item for t in found for item in (renders[t] if isinstance(t, Chart) else (t,))]
    # the local bases of a kustomization that failed to build, which nothing that built covers: each
    # rendered on its own (and so on, where one of them fails too)
    done = {t.directory.resolve() for t in charts}
    failed = [t for t in charts if failed_render(t, renders[t])]
    built = [t for t in charts if t not in failed]
    while failed:
        pairs = bases_to_render(failed, built, done)
        bases = [base for _, base in pairs]
        more = _render_all(bases, workers)
        for parent, base in pairs:
            # a base that fails for the cause its parent's error already names is not a second error
            said = renders[parent]
            out.extend(item for item in more[base] if not same_failure(item, said))
        renders.update(more)
        failed = [t for t in bases if failed_render(t, more[t])]
        built += [t for t in bases if t not in failed]
    return out


def _render_all(charts: Sequence[Chart], workers: int) -> dict[Chart, list[Item]]:
    rendered: Iterator[list[Item]] = (list(render_chart(chart)) for chart in charts)
    if workers > 1 and len(charts) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(workers, len(charts)), thread_name_prefix="render") as pool:
            rendered = iter(list(pool.map(lambda chart: list(render_chart(chart)), charts)))
    return dict(zip(charts, rendered, strict=True))


def scan(
    resources: list[Resource],
    evaluator: Evaluator,
    options: ScanOptions,
    *,
    version: str,
    errors: Sequence[InputError] = (),
    files: int = 0,
    progress: Callable[[int], None] | None = None,
    workers: Workers | None = None,
) -> Result:
    """Evaluate resources already read."""
    namespaceless = default_namespaces(resources, options.namespace)
    inventory = inventory_of((r.obj for r in resources), renders=True)
    inventory.cluster = options.cluster
    inventory.azure_cluster = evaluator.config.azure.cluster  # several AKS clusters: the manifests' one
    if options.cluster is not None:
        for r in resources:
            r.origin.cluster = options.cluster
    source = InventoryFacts(inventory)
    todo = [r for r in resources if evaluator.in_scope(r)]
    result = Result(tool_version=version, errors=list(errors), rules=dict(evaluator.rules), files=files)
    result.namespaceless = namespaceless
    if len(todo) < len(resources):
        judged = {id(r) for r in todo}
        result.out_of_scope = [f"{_at(r)} {r.ref().display()}" for r in resources if id(r) not in judged]
    if evaluator.set_inventory(r.obj for r in resources):
        options = dataclasses.replace(options, workers=1)  # data.inventory lives in this process
    # the stockade.io/ignore-<RULE> annotations, as `suppressions.scan` allows (by default: honoured)
    suppressions = SuppressionBook(evaluator.config.suppressions, "scan", evaluator.exceptions.today)
    own_pool = workers is None
    workers = workers or Workers(options)
    notes = None
    try:
        outcomes: Iterable[Decided]
        if options.workers > 1 and len(todo) >= PARALLEL_OBJECTS and can_fork():
            outcomes = _evaluate_forked(todo, evaluator, source, workers, progress)
            # the notes read only the objects and the inventory: this process works them out while
            # the workers evaluate, instead of after them
            notes = scan_notes(evaluator, todo, source)
        else:
            jobs: list[Job] = [
                (i, _inputs(evaluator, r, source), _disk_position(r.origin)) for i, r in enumerate(todo)
            ]
            outcomes = evaluate_jobs(jobs, evaluator, options, workers, progress)
        for index, outcome, lines in outcomes:
            resource = todo[index]
            if isinstance(outcome, str):
                where = resource.origin.file or resource.ref().display()
                result.errors.append(
                    InputError(where, f"{resource.ref().display()}: {outcome}", resource.origin.line)
                )
                continue
            if lines is not None:
                resource.origin.locator = StaticLocator(lines)
                resource.origin.prefix = ()
            findings = suppressions.apply(resource, evaluator.decide(resource, outcome))
            if options.baseline is not None:  # each finding on its own, before folding
                findings = fold(options.baseline.apply(resource, findings))
                options.baseline.count(resource, findings)
            else:
                findings = fold(findings)
            result.findings.extend(findings)
    finally:
        if own_pool:
            workers.close()
    result.resources = len(todo)
    result.exceptions = evaluator.exceptions.statuses() + suppressions.statuses()
    # once, here: never per object or per worker
    result.notes = notes if notes is not None else scan_notes(evaluator, todo, source)
    return result


# (file, document, prefix, the document's span): enough for a worker to find lines on disk.
Position = tuple[str, int, JSONPath, Span | None]
Job = tuple[int, list[EngineInput], Position | None]
Outcome = list[Violation] | str  # violations, or why the engine could not evaluate the object
Lines = dict[JSONPath, int | None]
Decided = tuple[int, Outcome, Lines | None]  # (index of the job, its outcome, its violations' lines)


def _disk_position(origin: Origin) -> Position | None:
    """A position workers can resolve: read in a worker (no locator yet) from a file on disk."""
    if origin.locator is None and origin.file is not None and origin.document is not None:
        return (origin.file, origin.document, origin.prefix, origin.span)
    return None


def _inputs(evaluator: Evaluator, resource: Resource, source: InventoryFacts) -> list[EngineInput]:
    namespace = namespace_for(resource, source)
    return evaluator.inputs(resource, operation=Operation.SCAN, namespace=namespace, source=source)


def _evaluate_forked(
    todo: list[Resource],
    evaluator: Evaluator,
    source: InventoryFacts,
    workers: Workers,
    progress: Callable[[int], None] | None,
) -> Iterator[Decided]:
    """Steps 3 and 4 of a large scan where processes fork: workers share the resources, the inventory
    and the evaluator with this process, and return violations with their lines. The workers are
    forked and given every chunk before this returns (the outcomes are read as they come)."""
    # what analyzers derive from the inventory on first use (the RBAC graph, policy indexes) is
    # derived once, here, rather than once per worker
    kinds: dict[str, Resource] = {}
    for r in todo:
        kinds.setdefault(r.kind, r)
    for r in kinds.values():
        _inputs(evaluator, r, source)
    pool = workers.fork((evaluator, todo, source))
    bounds = [(i, min(i + CHUNK, len(todo))) for i in range(0, len(todo), CHUNK)]
    return _mapped(pool, _eval_forked, bounds, progress)


def _mapped(
    pool: Executor,
    work: Callable[[Any], list[Decided]],
    chunks: Sequence[Any],
    progress: Callable[[int], None] | None,
) -> Iterator[Decided]:
    """The outcomes of `work` over `chunks` in the pool, in order, counting progress per chunk; every
    chunk is submitted now, the outcomes are yielded as the caller reads them."""
    return _outcomes(pool.map(work, chunks), progress)


def _outcomes(done: Iterable[list[Decided]], progress: Callable[[int], None] | None) -> Iterator[Decided]:
    for chunk in done:
        yield from chunk
        if progress:
            progress(len(chunk))


def _evaluate_one(evaluator: Evaluator, inputs: list[EngineInput]) -> Outcome:
    try:
        return evaluate_inputs(evaluator.engine, inputs)
    except RuleEvaluationError as exc:
        return f"rule evaluation failed: {exc}"


def _decided(evaluator: Evaluator, index: int, inputs: list[EngineInput], pos: Position | None) -> Decided:
    """One object's outcome and, for violations in a file on disk, their lines."""
    outcome = _evaluate_one(evaluator, inputs)
    return index, outcome, _lines(pos, outcome)


def evaluate_jobs(
    jobs: list[Job],
    evaluator: Evaluator,
    options: ScanOptions,
    workers: Workers,
    progress: Callable[[int], None] | None,
) -> Iterable[Decided]:
    if options.workers <= 1 or len(jobs) < PARALLEL_OBJECTS:
        for job in jobs:
            yield _decided(evaluator, *job)
            if progress:
                progress(1)
        return
    chunks = [jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK)]
    yield from _mapped(workers.get(), _eval_chunk, chunks, progress)


# --- worker side -------------------------------------------------------------------------------

#: what a forked worker evaluates: the evaluator, the resources in scope and their facts' source
Forked = tuple[Evaluator, list[Resource], InventoryFacts]
_forked: Forked | None = None
_worker: Evaluator | None = None
_worker_args: tuple[Config, tuple[Path, ...]] | None = None
_last_file: tuple[str, LazyFile] | None = None


def _init_worker(config: Config, policy_dirs: tuple[Path, ...]) -> None:
    global _worker_args
    gc.set_threshold(*BATCH_GC_THRESHOLD)  # a worker is a batch process from start to end
    _worker_args = (config, policy_dirs)  # the evaluator is built on first use: readers need none


def _worker_evaluator() -> Evaluator:
    global _worker
    if _worker is None:
        assert _worker_args is not None, "worker not initialised"
        _worker = Evaluator.default(*_worker_args)
    return _worker


Plain = tuple[dict[str, Any], str, int | None, int | None, JSONPath, Span | None] | InputError | Skipped


def _read_plain(path: Path) -> list[Plain] | bytes:
    """Read one file; return objects without their (unpicklable, heavy) position data.

    A file of objects only is returned marshalled: decoded objects are dicts, lists, strings and
    numbers, which `marshal` loads in this process's parent in about 60 % of pickle's time (the
    parent loads every object of the tree while the workers parse). Both ends are the same
    interpreter, forked or spawned from it; anything marshal cannot carry goes as pickle does."""
    out: list[Plain] = []
    for item in read_file(path):
        if isinstance(item, InputError | Skipped):
            out.append(item)
        else:
            o = item.origin
            span = o.locator.span if isinstance(o.locator, LazyFileLocator) else None
            out.append((item.obj, o.file or str(path), o.document, o.line, o.prefix, span))
    if all(type(p) is tuple for p in out):
        try:
            return marshal.dumps(out)
        except ValueError:  # a value of another type: pickled with the rest
            pass
    return out


def _unpacked(plain: list[Plain] | bytes) -> list[Plain]:
    return marshal.loads(plain) if isinstance(plain, bytes) else plain


def _from_plain(plain: Plain) -> Item:
    if isinstance(plain, InputError | Skipped):
        return plain
    obj, file, document, line, prefix, span = plain
    return Resource(obj, Origin(file=file, document=document, line=line, prefix=prefix, span=span))


def _lines(pos: Position | None, outcome: Outcome) -> Lines | None:
    """Lines of every violation path, from the file on disk (only for objects read by workers)."""
    global _last_file
    if pos is None or isinstance(outcome, str) or not outcome:
        return None
    file, document, prefix, span = pos
    if _last_file is None or _last_file[0] != file:
        try:
            _last_file = (file, LazyFile(Path(file).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            return None
    locator = LazyFileLocator(_last_file[1], document, span)
    lines: Lines = {(): locator.line_of(prefix)}
    for v in outcome:
        lines[v.path] = locator.line_of(prefix + v.path)
    return lines


def _eval_chunk(chunk: list[Job]) -> list[Decided]:
    evaluator = _worker_evaluator()
    return [_decided(evaluator, *job) for job in chunk]


def _eval_forked(bounds: tuple[int, int]) -> list[Decided]:
    assert _forked is not None, "not a forked worker"
    evaluator, todo, source = _forked
    return [
        _decided(evaluator, i, _inputs(evaluator, todo[i], source), _disk_position(todo[i].origin))
        for i in range(*bounds)
    ]
