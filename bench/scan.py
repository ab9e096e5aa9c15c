"""Benchmark `stockade scan` against the YAML parse-only floor and (optionally) checkov.

Generates N realistic workload manifests (Deployments, Jobs, StatefulSets, CronJobs and Pods with
1-3 containers, GPU requests, and securityContexts of which a share violate Pod Security Standards)
into a temporary directory, several documents per file, then times side by side, with repetitions
and medians:

  parse-only   PyYAML `yaml.load_all(..., Loader=yaml.CSafeLoader)` of every file, in this process
  stockade     `stockade scan DIR --format json --output FILE --fail-on never` (a subprocess)
  in-process   the same pipeline through the Python API (no interpreter start-up or imports)
  checkov      `checkov -d DIR --framework kubernetes --quiet --compact -o json`, when available

Not part of the test suite. Usage and recorded results: bench/README.md.

    .venv/bin/python bench/scan.py [--objects 2000] [--repeat 5] [--checkov .bench/checkov]
        [--baseline OLD_VENV/bin/stockade]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from workloads import REGISTRY, image_reference, violate

TARGET_PARSE_RATIO = 3.0  # stockade scan <= 3x the parse-only time
TARGET_CHECKOV_SPEEDUP = 20.0  # stockade scan >= 20x checkov's throughput
TARGET_WORKERS_RATIO = 0.6  # issue 39: two workers within 60 % of one worker's wall time

NAMESPACES = ("ml-training", "ml-inference", "research", "batch-eval", "feature-store", "data-prep")
KIND_WEIGHTS = {"Deployment": 35, "Job": 20, "StatefulSet": 15, "CronJob": 15, "Pod": 15}
GPU_POOLS = ("gpua100", "gpuh100", "gpul4")
MAIN_IMAGES = (
    "ml/pytorch-train",
    "serving/vllm-openai",
    "serving/triton-server",
    "ml/eval-harness",
    "ml/ray",
)
SIDECARS = (
    ("log-shipper", "platform/fluent-bit", 2020),
    ("metrics-proxy", "platform/metrics-proxy", 9400),
    ("model-sync", "platform/model-sync", 8081),
    ("auth-proxy", "platform/oauth2-proxy", 4180),
)
# Ways a generated workload breaks Pod Security Standards (a share of workloads get one or two).
VIOLATIONS = (
    "privileged",
    "host_path_socket",
    "host_path_gpu",
    "host_network",
    "net_admin",
    "no_run_as_non_root",
    "run_as_root",
    "latest_image",
    "privilege_escalation",
    "unconfined_seccomp",
    "unsafe_sysctl",
    "host_port",
    "nfs_volume",
)


# The configuration of the scanned "organisation": the generated images come from its registry, so
# only the deliberate violations are reported (with no approved registry every image would be).
BENCH_CONFIG = f"""\
apiVersion: stockade.io/v1alpha1
kind: Config
images:
  allowed_registries: ["{REGISTRY}/"]
"""


# ---------------------------------------------------------------------------------------------------
# Manifest generation


def _digest(rng: random.Random) -> str:
    return f"sha256:{rng.getrandbits(256):064x}"


def _container(rng: random.Random, name: str, image: str, port: int, gpus: int) -> dict[str, Any]:
    cpu = rng.choice((1, 2, 4, 8, 16))
    mem = rng.choice((2, 4, 8, 16, 32, 64))
    requests: dict[str, Any] = {"cpu": str(cpu), "memory": f"{mem}Gi"}
    limits: dict[str, Any] = {"cpu": str(cpu), "memory": f"{mem}Gi"}
    digest = _digest(rng)  # drawn where the image's was, so the rest of the workload is unchanged
    if gpus:
        requests["nvidia.com/gpu"] = gpus
        limits["nvidia.com/gpu"] = gpus
    return {
        "name": name,
        "image": image_reference(image, digest, digest),
        "imagePullPolicy": "IfNotPresent",
        "args": [f"--port={port}", f"--log-level={rng.choice(('info', 'warning'))}", "--metrics"],
        "env": [
            {"name": "NCCL_DEBUG", "value": "WARN"},
            {"name": "HF_HUB_OFFLINE", "value": "1"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "OMP_NUM_THREADS", "value": str(cpu)},
        ],
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 10},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 30},
        "resources": {"requests": requests, "limits": limits},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "tmp", "mountPath": "/tmp"},
            {"name": "config", "mountPath": "/etc/app", "readOnly": True},
        ],
    }


def _pod_spec(rng: random.Random, name: str, kind: str, heavy: bool = False) -> dict[str, Any]:
    gpus = rng.choice((1, 2, 4, 8)) if rng.random() < 0.4 else 0
    main = _container(rng, "main", rng.choice(MAIN_IMAGES), 8000, gpus)
    containers = [main]
    for side_name, side_image, side_port in rng.sample(SIDECARS, rng.randint(0, 2)):
        containers.append(_container(rng, side_name, side_image, side_port, 0))
    spec: dict[str, Any] = {
        "serviceAccountName": name,
        "automountServiceAccountToken": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 1000 + rng.randint(0, 999),
            "runAsGroup": 1000,
            "fsGroup": 1000,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": containers,
        "volumes": [
            {"name": "tmp", "emptyDir": {"sizeLimit": "10Gi"}},
            {"name": "config", "configMap": {"name": f"{name}-config"}},
        ],
    }
    if kind in ("Job", "CronJob", "Pod"):
        spec["restartPolicy"] = "Never" if kind != "Pod" else "Always"
    if gpus:
        spec["nodeSelector"] = {"kubernetes.azure.com/agentpool": rng.choice(GPU_POOLS)}
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        spec["volumes"].append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}})
        main["volumeMounts"].append({"name": "dshm", "mountPath": "/dev/shm"})
    if rng.random() < 0.25:
        init = _container(rng, "fetch-weights", "platform/model-sync", 8082, 0)
        del init["readinessProbe"], init["livenessProbe"], init["ports"]
        spec["initContainers"] = [init]
    if heavy:  # --findings-heavy: every workload breaks every control (about 13 findings each)
        for violation in VIOLATIONS:
            violate(rng, spec, violation)
    elif rng.random() < 0.4:
        for violation in rng.sample(VIOLATIONS, rng.randint(1, 2)):
            violate(rng, spec, violation)
    return spec


def make_workload(rng: random.Random, index: int, heavy: bool = False) -> dict[str, Any]:
    kind = rng.choices(list(KIND_WEIGHTS), weights=list(KIND_WEIGHTS.values()))[0]
    namespace = rng.choice(NAMESPACES)
    name = f"{kind.lower()}-{index:05d}"
    labels = {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/part-of": rng.choice(("llm", "vision", "recsys", "speech")),
        "team": rng.choice(("ml-platform", "serving", "research", "evals")),
    }
    metadata = {"name": name, "namespace": namespace, "labels": labels}
    template = {
        "metadata": {"labels": labels, "annotations": {"prometheus.io/scrape": "true"}},
        "spec": _pod_spec(rng, name, kind, heavy),
    }
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}
    selector = {"matchLabels": {"app.kubernetes.io/name": name}}
    if kind == "Deployment":
        spec: dict[str, Any] = {"replicas": rng.randint(1, 8), "selector": selector, "template": template}
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": metadata, "spec": spec}
    if kind == "StatefulSet":
        spec = {
            "serviceName": name,
            "replicas": rng.randint(1, 3),
            "selector": selector,
            "template": template,
        }
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": metadata, "spec": spec}
    job_spec = {"backoffLimit": 2, "ttlSecondsAfterFinished": 86400, "template": template}
    if kind == "Job":
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": metadata, "spec": job_spec}
    spec = {"schedule": f"{rng.randint(0, 59)} {rng.randint(0, 23)} * * *", "jobTemplate": {"spec": job_spec}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": metadata, "spec": spec}


def generate(
    root: Path, objects: int, docs_per_file: int, seed: int, heavy: bool = False
) -> tuple[list[Path], int]:
    """Write `objects` workloads as multi-document YAML files under `root`; return files and bytes."""
    rng = random.Random(seed)
    docs = [make_workload(rng, i, heavy) for i in range(objects)]
    files: list[Path] = []
    size = 0
    for n, start in enumerate(range(0, objects, docs_per_file)):
        chunk = docs[start : start + docs_per_file]
        folder = root / chunk[0]["metadata"]["namespace"]
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"workloads-{n:04d}.yaml"
        text = yaml.dump_all(chunk, Dumper=yaml.CSafeDumper, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        files.append(path)
        size += len(text.encode())
    return files, size


# ---------------------------------------------------------------------------------------------------
# Timing


@dataclass
class Row:
    tool: str
    command: str
    times: list[float] = field(default_factory=list)
    note: str = ""
    #: subprocess rows: CPU seconds (user + system, its worker processes included) and peak RSS in MB
    #: of its largest process (os.wait4's ru_maxrss: the scan's parent, which holds the findings)
    cpu: list[float] = field(default_factory=list)
    peak_mb: list[float] = field(default_factory=list)

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def median_cpu(self) -> float | None:
        return statistics.median(self.cpu) if self.cpu else None

    @property
    def median_peak(self) -> float | None:
        return statistics.median(self.peak_mb) if self.peak_mb else None


Usage = tuple[float, float] | None  # (CPU seconds, peak RSS MB) of a subprocess run, None in-process


def _record(row: Row, seconds: float, usage: Usage, i: int, repeat: int) -> None:
    row.times.append(seconds)
    extra = ""
    if usage is not None:
        row.cpu.append(usage[0])
        row.peak_mb.append(usage[1])
        extra = f", CPU {usage[0]:.3f} s, peak {usage[1]:.0f} MB"
    print(f"  {row.tool}: run {i + 1}/{repeat}: {seconds:.3f} s{extra}", file=sys.stderr)


def measure(row: Row, run: Callable[[], Usage], repeat: int, warmup: int) -> Row:
    for _ in range(warmup):
        run()
    for i in range(repeat):
        start = time.perf_counter()
        usage = run()
        _record(row, time.perf_counter() - start, usage, i, repeat)
    return row


def measure_side_by_side(
    rows: Sequence[Row], runs: Sequence[Callable[[], Usage]], repeat: int, warmup: int
) -> None:
    """Time several commands in alternating order, round by round, so that a slower minute of a shared
    machine weighs on each of them alike."""
    for _ in range(warmup):
        for run in runs:
            run()
    for i in range(repeat):
        order = list(zip(rows, runs, strict=True))
        for row, run in order if i % 2 == 0 else reversed(order):
            start = time.perf_counter()
            usage = run()
            _record(row, time.perf_counter() - start, usage, i, repeat)


def parse_only(files: Sequence[Path]) -> Callable[[], Usage]:
    def run() -> Usage:
        count = 0
        for path in files:
            text = path.read_text(encoding="utf-8")
            count += sum(1 for _ in yaml.load_all(text, Loader=yaml.CSafeLoader))
        assert count > 0
        return None

    return run


def subprocess_runner(argv: Sequence[str], ok_codes: Sequence[int]) -> Callable[[], Usage]:
    """Run `argv`; its CPU time (its reaped worker processes included) and its largest process's peak
    RSS, from os.wait4."""

    def run() -> Usage:
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode not in ok_codes:
                err.seek(0)
                tail = err.read().decode(errors="replace").strip().splitlines()[-5:]
                raise RuntimeError(f"{shlex.join(argv)} exited {proc.returncode}: " + " | ".join(tail))
        return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024

    return run


def in_process_runner(argv: Sequence[str]) -> Callable[[], Usage]:
    """The `stockade scan` command called in this process: no interpreter start-up, imports done.

    It goes through the CLI entry point rather than scanner internals, so it measures exactly what
    the subprocess does (config, library load, read, evaluate, JSON report) minus process start-up.
    """
    import typer.main

    from stockade.cli.main import app

    command = typer.main.get_command(app)

    def run() -> Usage:
        with contextlib.redirect_stderr(io.StringIO()):  # the one-line summary of each run
            try:
                code = command.main(list(argv), prog_name="stockade", standalone_mode=False)
            except SystemExit as exc:  # some click versions exit even when not standalone
                code = exc.code
        if code not in (0, None):
            raise RuntimeError(f"in-process stockade {shlex.join(argv)} returned {code}")
        return None

    return run


def find_stockade(given: str | None) -> str | None:
    if given:
        return given
    sibling = Path(sys.executable).with_name("stockade")
    return str(sibling) if sibling.exists() else shutil.which("stockade")


def find_checkov(given: str | None) -> str | None:
    """`--checkov` may name the checkov executable or a virtualenv that has it; else look on PATH."""
    if given:
        p = Path(given)
        for candidate in (p / "bin" / "checkov", p / "Scripts" / "checkov.cmd", p):
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
        raise SystemExit(f"--checkov {given}: no checkov executable there (expected DIR/bin/checkov)")
    return shutil.which("checkov")


def tool_version(argv: Sequence[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return out.strip().splitlines()[0] if out.strip() else "?"


# ---------------------------------------------------------------------------------------------------
# Report


def _fmt(x: float | None, spec: str, suffix: str = "") -> str:
    return "n/a" if x is None else f"{x:{spec}}{suffix}"


def table(rows: Sequence[Row], objects: int) -> str:
    base = next((r.median for r in rows if r.tool == "parse-only"), None)
    checkov = next((r.median for r in rows if r.tool == "checkov"), None)
    lines = [
        "| tool | median s | CPU s | peak MB | objects/s | x parse-only | speed-up vs checkov | runs |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        m = r.median
        if m is None:
            lines.append(f"| {r.tool} | {r.note or 'not run'} | | | | | | 0 |")
            continue
        lines.append(
            f"| {r.tool} | {m:.3f} | {_fmt(r.median_cpu, '.3f')} | {_fmt(r.median_peak, '.0f')} "
            f"| {objects / m:,.0f} | {_fmt(m / base if base else None, '.2f', 'x')} "
            f"| {_fmt(checkov / m if checkov else None, '.1f', 'x')} | {len(r.times)} |"
        )
    return "\n".join(lines)


def cli_label(workers: int | None, several: bool, baseline: bool = False) -> str:
    """The row of `stockade scan` (or the baseline's) with `workers`; named by its workers when the
    run times several worker counts."""
    name = "baseline stockade scan" if baseline else "stockade scan (CLI)"
    return f"{name}, --workers {workers}" if several else name


def verdicts(rows: Sequence[Row], workers: Sequence[int | None] = (None,)) -> list[str]:
    by = {r.tool: r.median for r in rows}
    out = []
    several = len(workers) > 1
    most = max(workers, key=lambda w: w or 0)
    base, cli, checkov = by.get("parse-only"), by.get(cli_label(most, several)), by.get("checkov")
    if several and 1 in workers:
        for baseline in (False, True):
            one, many = by.get(cli_label(1, True, baseline)), by.get(cli_label(most, True, baseline))
            if one and many:
                ratio = many / one
                ok = "PASS" if ratio <= TARGET_WORKERS_RATIO else "FAIL"
                who = "baseline" if baseline else "stockade scan"
                out.append(
                    f"- {ok}: {who} with --workers {most} = {ratio:.2f}x its --workers 1 wall time "
                    f"(target <= {TARGET_WORKERS_RATIO:g}x)"
                )
    if base and cli:
        ratio = cli / base
        ok = "PASS" if ratio <= TARGET_PARSE_RATIO else "FAIL"
        out.append(f"- {ok}: stockade scan = {ratio:.2f}x parse-only (target <= {TARGET_PARSE_RATIO:g}x)")
    if checkov and cli:
        speedup = checkov / cli
        ok = "PASS" if speedup >= TARGET_CHECKOV_SPEEDUP else "FAIL"
        out.append(
            f"- {ok}: stockade scan = {speedup:.1f}x checkov throughput "
            f"(target >= {TARGET_CHECKOV_SPEEDUP:g}x)"
        )
    elif cli:
        out.append("- checkov target not checked: checkov not found (see bench/README.md)")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("--objects", type=int, default=2000, help="workload objects to generate (2000)")
    ap.add_argument("--docs-per-file", type=int, default=8, help="YAML documents per file (8)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per tool (5)")
    ap.add_argument("--checkov-repeat", type=int, default=3, help="timed runs of checkov (3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs before timing (1)")
    ap.add_argument("--seed", type=int, default=20260301, help="generator seed")
    ap.add_argument(
        "--findings-heavy",
        action="store_true",
        help="every workload breaks every control (about 13 findings per object, not 0.9)",
    )
    ap.add_argument(
        "--workers",
        type=int,
        action="append",
        help="stockade --workers (default: its own); repeat (--workers 1 --workers 2) to time each "
        "side by side",
    )
    ap.add_argument("--stockade", help="stockade executable (default: next to this Python, else PATH)")
    ap.add_argument("--checkov", help="checkov executable or a venv holding it (default: PATH)")
    ap.add_argument(
        "--baseline",
        help="another stockade executable (an older checkout's venv) timed in alternation with --stockade",
    )
    ap.add_argument("--no-in-process", action="store_true", help="skip the in-process API timing")
    ap.add_argument("--keep", type=Path, help="generate into this directory and keep it")
    args = ap.parse_args(argv)

    stockade = find_stockade(args.stockade)
    checkov = find_checkov(args.checkov)
    tmp = None
    if args.keep:
        root = args.keep
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="stockade-bench-")
        root = Path(tmp.name)
    try:
        start = time.perf_counter()
        manifests = root / "manifests"
        files, size = generate(manifests, args.objects, args.docs_per_file, args.seed, args.findings_heavy)
        config = root / "stockade.yaml"
        config.write_text(BENCH_CONFIG, encoding="utf-8")
        print(
            f"generated {args.objects} objects in {len(files)} files ({size / 1e6:.1f} MB) under {manifests} "
            f"in {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
        )
        rows: list[Row] = []
        rows.append(
            measure(
                Row("parse-only", "yaml.load_all(text, Loader=yaml.CSafeLoader) for each file, in-process"),
                parse_only(files),
                args.repeat,
                args.warmup,
            )
        )
        base_args = ["scan", str(manifests), "--config", str(config), "--format", "json"]
        # a file of its own, not /dev/null: a --baseline build older than a82687a renamed its report
        # over the destination, which as root made /dev/null a regular file
        base_args += ["--output", str(root / "report.json"), "--fail-on", "never"]
        worker_counts: list[int | None] = list(args.workers or [None])
        several = len(worker_counts) > 1
        scan_args = base_args
        if stockade:
            # every command once per round, in alternating order (several worker counts, the baseline)
            timed: list[Row] = []
            runners = []
            for workers in worker_counts:
                scan_args = base_args + ([] if workers is None else ["--workers", str(workers)])
                builds = [(stockade, False)] + ([(args.baseline, True)] if args.baseline else [])
                for exe, is_baseline in builds:
                    cmd = [exe, *scan_args]
                    timed.append(Row(cli_label(workers, several, is_baseline), shlex.join(cmd)))
                    runners.append(subprocess_runner(cmd, (0,)))
            measure_side_by_side(timed, runners, args.repeat, args.warmup)
            rows.extend(timed)
        else:
            rows.append(Row("stockade scan (CLI)", "stockade scan …", note="stockade not found"))
        if not args.no_in_process:
            row = Row("stockade (in-process)", f"stockade.cli.main.app({scan_args!r}) in this process")
            rows.append(measure(row, in_process_runner(scan_args), args.repeat, args.warmup))
        if checkov:
            cmd = [checkov, "-d", str(manifests), "--framework", "kubernetes", "--quiet", "--compact"]
            cmd += ["-o", "json"]
            row = Row("checkov", shlex.join(cmd))
            rows.append(
                measure(row, subprocess_runner(cmd, (0, 1)), args.checkov_repeat, min(args.warmup, 1))
            )
        else:
            rows.append(Row("checkov", "checkov -d …", note="not found: pass --checkov PATH"))

        print()
        print(f"## stockade scan benchmark: {args.objects} objects, {len(files)} files, {size / 1e6:.1f} MB")
        print()
        print(
            f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
            f"{os.cpu_count()} CPUs, PyYAML {yaml.__version__} (libyaml: {yaml.__with_libyaml__}), "
            f"stockade {tool_version([stockade, 'version']) if stockade else 'n/a'}, "
            f"checkov {tool_version([checkov, '--version']) if checkov else 'n/a'}; "
            f"median of {args.repeat} runs (checkov {args.checkov_repeat}) after {args.warmup} warm-up"
        )
        print()
        print(table(rows, args.objects))
        print()
        print("\n".join(verdicts(rows, worker_counts)))
        print()
        print("Commands:")
        print()
        for r in rows:
            print(f"- {r.tool}: `{r.command}`")
        print(f"- this benchmark: `{shlex.join([sys.executable, *sys.argv])}`")
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
