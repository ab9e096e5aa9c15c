"""Benchmark `stockade scan` against the YAML parse-only floor and (optionally) checkov.

Generates N realistic workload manifests (Deployments, Jobs, StatefulSets, CronJobs and Pods with
1-3 containers, GPU requests, and securityContexts of which a share violate Pod Security Standards)
into a temporary directory, several documents per file, then times side by side, with repetitions
and medians:

  parse-only   PyYAML `yaml.load_all(..., Loader=yaml.CSafeLoader)` of every file, in this process
  stockade     `stockade scan DIR --format json --output /dev/null --fail-on never` (a subprocess)
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
from workloads import REGISTRY, violate

TARGET_PARSE_RATIO = 3.0  # stockade scan <= 3x the parse-only time
TARGET_CHECKOV_SPEEDUP = 20.0  # stockade scan >= 20x checkov's throughput

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
    if gpus:
        requests["nvidia.com/gpu"] = gpus
        limits["nvidia.com/gpu"] = gpus
    return {
        "name": name,
        "image": f"{REGISTRY}/{image}@{_digest(rng)}",
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

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None


def measure(row: Row, run: Callable[[], None], repeat: int, warmup: int) -> Row:
    for _ in range(warmup):
        run()
    for i in range(repeat):
        start = time.perf_counter()
        run()
        row.times.append(time.perf_counter() - start)
        print(f"  {row.tool}: run {i + 1}/{repeat}: {row.times[-1]:.3f} s", file=sys.stderr)
    return row


def measure_side_by_side(
    rows: Sequence[Row], runs: Sequence[Callable[[], None]], repeat: int, warmup: int
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
            run()
            row.times.append(time.perf_counter() - start)
            print(f"  {row.tool}: run {i + 1}/{repeat}: {row.times[-1]:.3f} s", file=sys.stderr)


def parse_only(files: Sequence[Path]) -> Callable[[], None]:
    def run() -> None:
        count = 0
        for path in files:
            text = path.read_text(encoding="utf-8")
            count += sum(1 for _ in yaml.load_all(text, Loader=yaml.CSafeLoader))
        assert count > 0

    return run


def subprocess_runner(argv: Sequence[str], ok_codes: Sequence[int]) -> Callable[[], None]:
    def run() -> None:
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        if proc.returncode not in ok_codes:
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-5:]
            raise RuntimeError(f"{shlex.join(argv)} exited {proc.returncode}: " + " | ".join(tail))

    return run


def in_process_runner(argv: Sequence[str]) -> Callable[[], None]:
    """The `stockade scan` command called in this process: no interpreter start-up, imports done.

    It goes through the CLI entry point rather than scanner internals, so it measures exactly what
    the subprocess does (config, library load, read, evaluate, JSON report) minus process start-up.
    """
    import typer.main

    from stockade.cli.main import app

    command = typer.main.get_command(app)

    def run() -> None:
        with contextlib.redirect_stderr(io.StringIO()):  # the one-line summary of each run
            try:
                code = command.main(list(argv), prog_name="stockade", standalone_mode=False)
            except SystemExit as exc:  # some click versions exit even when not standalone
                code = exc.code
        if code not in (0, None):
            raise RuntimeError(f"in-process stockade {shlex.join(argv)} returned {code}")

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
        "| tool | median s | objects/s | x parse-only | speed-up vs checkov | runs |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        m = r.median
        if m is None:
            lines.append(f"| {r.tool} | {r.note or 'not run'} | | | | 0 |")
            continue
        lines.append(
            f"| {r.tool} | {m:.3f} | {objects / m:,.0f} | {_fmt(m / base if base else None, '.2f', 'x')} "
            f"| {_fmt(checkov / m if checkov else None, '.1f', 'x')} | {len(r.times)} |"
        )
    return "\n".join(lines)


def verdicts(rows: Sequence[Row]) -> list[str]:
    by = {r.tool: r.median for r in rows}
    out = []
    base, cli, checkov = by.get("parse-only"), by.get("stockade scan (CLI)"), by.get("checkov")
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
    ap.add_argument("--workers", type=int, default=None, help="stockade --workers (default: its own)")
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
        scan_args = ["scan", str(manifests), "--config", str(config), "--format", "json"]
        scan_args += ["--output", os.devnull, "--fail-on", "never"]
        if args.workers is not None:
            scan_args += ["--workers", str(args.workers)]
        if stockade and args.baseline:
            cli, base = [stockade, *scan_args], [args.baseline, *scan_args]
            pair = [Row("stockade scan (CLI)", shlex.join(cli))]
            pair.append(Row("baseline stockade scan", shlex.join(base)))
            runners = [subprocess_runner(cli, (0,)), subprocess_runner(base, (0,))]
            measure_side_by_side(pair, runners, args.repeat, args.warmup)
            rows.extend(pair)
        elif stockade:
            cli = [stockade, *scan_args]
            row = Row("stockade scan (CLI)", shlex.join(cli))
            rows.append(measure(row, subprocess_runner(cli, (0,)), args.repeat, args.warmup))
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
        print("\n".join(verdicts(rows)))
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
