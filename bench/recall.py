"""Recall of `stockade scan` against Checkov's Kubernetes checks, object by object (issue 37).

    .venv/bin/python bench/recall.py --mirrors /work/.mirror --checkov /path/to/checkov
    .venv/bin/python bench/recall.py --mirrors DIR --checkov CKV --input kube-prometheus --misses

Checkov is not a dependency of stockade: install it apart (`python3 -m venv V && V/bin/pip install
checkov==3.3.30`) and pass its `checkov` with `--checkov`.

For every input of bench/precision/inputs.json (the precision benchmark's inputs: repository, commit,
paths), the paths are extracted from a bare git mirror with `git archive` and rendered once into one
YAML stream: `helm template` for each chart (a folder holding Chart.yaml), `kubectl kustomize` for a
kustomization root (a kustomization.yaml no other kustomization of the input composes), the
`.yaml`/`.yml`/`.json` files as they are otherwise. Both tools read that same stream:
`checkov -f rendered.yaml --framework kubernetes` and `stockade scan rendered.yaml --no-config`.

Each Checkov failure of a check in :data:`CHECKS` (the security controls both tools claim: privileged,
host namespaces, capabilities, privilege escalation, root, seccomp, read-only root filesystem, host
ports and paths, resources, image tags and digests, ServiceAccount tokens, RBAC) is *found* when
stockade reports the same object (kind, namespace, name) with one of the check's stockade rules,
as a finding of its own or folded into another (`details.folded`). :data:`NOT_COMPARED` lists the
checks left out and why (probes, CPU limits, UIDs above 10000, a deliberate difference). It prints
per check: Checkov's hits, found, missed; with `--misses`, every missed hit. A benchmark, not a
test: exit 0 whatever it measures, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from precision import DATA, ROOT, UsageError, chosen_inputs, extract, git_dir

#: Checkov check -> (what it checks, the stockade rules that report the same control)
CHECKS: dict[str, tuple[str, frozenset[str]]] = {
    k: (what, frozenset(rules))
    for k, what, rules in [
        ("CKV_K8S_10", "CPU requests", {"STK-RES-001", "STK-RES-002"}),
        ("CKV_K8S_12", "memory requests", {"STK-RES-001", "STK-RES-003"}),
        ("CKV_K8S_13", "memory limits", {"STK-RES-001"}),
        ("CKV_K8S_14", "image tag fixed, not latest", {"STK-IMG-002", "STK-IMG-005"}),
        ("CKV_K8S_16", "privileged", {"STK-POD-003"}),
        ("CKV_K8S_17", "hostPID", {"STK-POD-002"}),
        ("CKV_K8S_18", "hostIPC", {"STK-POD-002"}),
        ("CKV_K8S_19", "hostNetwork", {"STK-POD-002"}),
        ("CKV_K8S_20", "allowPrivilegeEscalation", {"STK-POD-102"}),
        ("CKV_K8S_22", "read-only root filesystem", {"STK-POD-202"}),
        ("CKV_K8S_23", "root containers", {"STK-POD-103", "STK-POD-104"}),
        ("CKV_K8S_25", "added capabilities", {"STK-POD-004", "STK-POD-106"}),
        ("CKV_K8S_26", "hostPort", {"STK-POD-006"}),
        ("CKV_K8S_27", "Docker socket", {"STK-POD-201", "STK-POD-005"}),
        ("CKV_K8S_28", "NET_RAW", {"STK-POD-106"}),
        ("CKV_K8S_29", "pod securityContext", {"STK-POD-103", "STK-POD-105", "STK-POD-102", "STK-POD-106"}),
        (
            "CKV_K8S_30",
            "container securityContext",
            {"STK-POD-103", "STK-POD-105", "STK-POD-102", "STK-POD-106"},
        ),
        ("CKV_K8S_31", "seccomp", {"STK-POD-105", "STK-POD-010"}),
        ("CKV_K8S_32", "seccomp (annotation)", {"STK-POD-105", "STK-POD-010"}),
        ("CKV_K8S_37", "capabilities drop", {"STK-POD-106"}),
        ("CKV_K8S_38", "ServiceAccount token mounted", {"STK-SA-001"}),
        ("CKV_K8S_39", "CAP_SYS_ADMIN", {"STK-POD-004", "STK-POD-106"}),
        ("CKV_K8S_41", "default ServiceAccount used", {"STK-SA-002", "STK-SA-001"}),
        ("CKV_K8S_43", "image digest", {"STK-IMG-003", "STK-IMG-005"}),
        ("CKV_K8S_49", "wildcard in Role/ClusterRole", {"STK-RBAC-001"}),
        ("CKV2_K8S_5", "no ServiceAccount reads all Secrets", {"STK-RBAC-002", "STK-RBAC-030"}),
        ("CKV2_K8S_6", "pods without a NetworkPolicy", {"STK-NET-001", "STK-NET-003"}),
        ("CKV_K8S_155", "admission webhook configurations", {"STK-RBAC-010", "STK-RBAC-001"}),
        ("CKV_K8S_156", "approve CertificateSigningRequests", {"STK-RBAC-008", "STK-RBAC-001"}),
        ("CKV_K8S_157", "bind RoleBindings", {"STK-RBAC-006", "STK-RBAC-001"}),
        ("CKV_K8S_158", "escalate Roles", {"STK-RBAC-006", "STK-RBAC-001"}),
    ]
}
#: Checkov checks where stockade differs on purpose: a hit stockade does not report is counted apart
#: ("by design") and listed with --misses, never hidden
BY_DESIGN: dict[str, str] = {
    "CKV_K8S_38": "automountServiceAccountToken: STK-SA-001 asks for it only on pods whose account is "
    "no API client (a controller needs its token; STK-RBAC-030 reports what that token holds)",
    "CKV_K8S_43": "image digests: STK-IMG-003 applies in images.require_digest_namespaces (none by default)",
    "CKV_K8S_29": "a pod securityContext: stockade judges what the containers end up with (STK-POD-1xx); a "
    "pod whose containers set their own has no gap",
    "CKV_K8S_30": "a container securityContext: as CKV_K8S_29, the resulting fields are judged",
    "CKV2_K8S_6": "pods with no NetworkPolicy: when the input holds neither the namespace's Namespace "
    "object nor its NetworkPolicies, STK-NET-001 is not evaluated and the report says so in a note "
    "naming the namespace (counted here only when that note is there)",
}
#: Checkov checks not compared, and why
NOT_COMPARED: dict[str, str] = {
    "CKV_K8S_8": "liveness probe: availability, not security",
    "CKV_K8S_9": "readiness probe: availability, not security",
    "CKV_K8S_11": "CPU limits: stockade requires CPU requests, not limits (throttling, not isolation)",
    "CKV_K8S_15": "pull policy Always on every image: stockade asks for it only on moving tags (STK-IMG-004)",
    "CKV_K8S_21": "the default namespace: a template's namespace is chosen at apply time",
    "CKV_K8S_35": "Secrets in env instead of files: not a stockade control",
    "CKV_K8S_40": "UID above 10000: not a Pod Security Standards control",
    "CKV_K8S_42": "ServiceAccount token automount on the account object: STK-SA-001 judges the pods",
}


def render(target: Path, into: Path, env: dict[str, str]) -> None:
    """The objects of `target`, rendered as `stockade scan` renders them, as plain YAML files in
    `into` (one per chart, kustomization root or input file)."""
    charts = sorted(p.parent for p in target.rglob("Chart.yaml"))
    charts = [c for c in charts if not any(o != c and o in c.parents for o in charts)]  # not subcharts
    roots = sorted(p.parent for p in target.rglob("kustomization.yaml"))
    composed = set()
    for root in roots:
        text = (root / "kustomization.yaml").read_text(errors="replace")
        for line in text.splitlines():
            ref = line.strip().lstrip("- ").strip().strip("'\"")
            if ref and not ref.endswith((".yaml", ".yml")) and not ref.startswith(("http", "#")):
                candidate = (root / ref).resolve()
                if candidate.is_dir():
                    composed.add(candidate)
    roots = [r for r in roots if r.resolve() not in composed]
    parts: list[tuple[str, str]] = []
    for chart in charts:
        done = subprocess.run(
            ["helm", "template", "stockade-scan", str(chart)], capture_output=True, text=True, env=env
        )
        if done.returncode != 0:
            raise UsageError(f"helm template {chart}: {done.stderr.strip()[-300:]}")
        parts.append((str(chart.relative_to(target)), done.stdout))
    for root in roots:
        if any(c in root.parents or c == root for c in charts):
            continue
        done = subprocess.run(["kubectl", "kustomize", str(root)], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise UsageError(f"kubectl kustomize {root}: {done.stderr.strip()[-300:]}")
        parts.append((str(root.relative_to(target)), done.stdout))
    if not charts and not roots:
        files = [target] if target.is_file() else sorted(target.rglob("*"))
        for f in files:
            if f.is_file() and f.suffix in (".yaml", ".yml", ".json"):
                parts.append(
                    (
                        str(f.relative_to(target)) if f != target else f.name,
                        f.read_bytes().decode(errors="replace"),
                    )
                )
    into.mkdir(parents=True, exist_ok=True)
    for i, (name, text) in enumerate(parts):
        suffix = ".json" if name.endswith(".json") else ".yaml"
        (into / f"{i:04d}-{name.replace('/', '_').removesuffix(suffix)}{suffix}").write_text(text)


def checkov(binary: str, path: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [binary, "-d", str(path), "--framework", "kubernetes", "-o", "json", "--quiet", "--compact"],
        capture_output=True,
        text=True,
        env=env,
    )
    if not done.stdout.strip():
        raise UsageError(f"checkov {path}: no output (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    out = json.loads(done.stdout)
    reports = out if isinstance(out, list) else [out]
    failed: list[dict[str, Any]] = []
    for report in reports:
        if isinstance(report, dict) and "results" in report:
            failed.extend(report["results"].get("failed_checks", []))
    return failed


def stockade(binary: str, path: Path, env: dict[str, str]) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        args = [binary, "scan", str(path), "--no-config", "-f", "json", "--fail-on", "never", "-o", out.name]
        done = subprocess.run(args, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise UsageError(f"stockade scan {path} exited {done.returncode}: {done.stderr.strip()[-300:]}")
        report: dict[str, Any] = json.loads(Path(out.name).read_text())
    return report


def rules_by_object(findings: list[dict[str, Any]]) -> dict[tuple[str, str, str], set[str]]:
    """(kind, namespace, name) -> every rule stockade reports on the object, folded ones included."""
    out: dict[tuple[str, str, str], set[str]] = collections.defaultdict(set)
    for f in findings:
        r = f["resource"]
        key = (r["kind"], r.get("namespace") or "default", r["name"])
        out[key].add(f["rule"]["id"])
        out[key].update(m["rule"] for m in f.get("details", {}).get("folded", ()) if isinstance(m, dict))
    return out


def object_of(hit: dict[str, Any], ours: dict[tuple[str, str, str], set[str]]) -> tuple[str, str, str]:
    """The object of a Checkov hit. Its graph checks (CKV2_*) name a pod template as
    `Pod.NAMESPACE.NAME.label-value…`: that is the workload of that namespace whose name the rest
    starts with (the longest), whatever its kind."""
    kind, _, rest = hit["resource"].partition(".")
    namespace, _, name = rest.partition(".")
    namespace = namespace or "default"
    if hit["check_id"].startswith("CKV2_") and kind == "Pod":
        owners = [k for k in ours if k[1] == namespace and (name == k[2] or name.startswith(k[2] + "."))]
        if owners:
            return max(owners, key=lambda k: (len(k[2]), k[0] in WORKLOADS))
    return kind, namespace, name


WORKLOADS = frozenset({"Pod", "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "CronJob"})


def role_refs(rendered: Path) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    """(binding kind, namespace, name) -> the (role kind, namespace, name) it refers to."""
    out = {}
    for f in sorted(rendered.iterdir()):
        try:
            docs = list(yaml.safe_load_all(f.read_text(errors="replace")))
        except yaml.YAMLError:
            continue
        for d in docs:
            if isinstance(d, dict) and d.get("kind") in ("RoleBinding", "ClusterRoleBinding"):
                meta, ref = d.get("metadata") or {}, d.get("roleRef") or {}
                ns = meta.get("namespace") or "default"
                role_ns = ns if ref.get("kind") == "Role" else "default"
                out[(d["kind"], ns, meta.get("name", ""))] = (
                    ref.get("kind", ""),
                    role_ns,
                    ref.get("name", ""),
                )
    return out


def noted(report: dict[str, Any], check: str, obj: tuple[str, str, str]) -> bool:
    """A note of the report says the hit's control was not evaluated for the object's namespace."""
    if check != "CKV2_K8S_6":
        return True
    return any(
        n.get("rule") == "STK-NET-001" and f"namespace {obj[1]}:" in n.get("message", "")
        for n in report.get("notes", ())
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of bare git mirrors owner+name")
    parser.add_argument("--checkov", required=True, help="the checkov executable (installed apart)")
    parser.add_argument("--inputs", type=Path, default=DATA / "inputs.json")
    parser.add_argument("--input", action="append", help="only this input (repeatable)")
    parser.add_argument("--stockade", default=str(Path(sys.executable).parent / "stockade"))
    parser.add_argument("--tools", type=Path, default=ROOT / ".tools" / "bin", help="helm, kubectl")
    parser.add_argument("--misses", action="store_true", help="list every missed Checkov hit")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except UsageError as exc:
        print(f"recall: {exc}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    inputs, env = chosen_inputs(args)
    hits: collections.Counter[str] = collections.Counter()
    found: collections.Counter[str] = collections.Counter()
    other: collections.Counter[str] = collections.Counter()
    designed: collections.Counter[str] = collections.Counter()
    missed: list[str] = []
    by_design: list[str] = []
    per_input: list[tuple[str, int, int]] = []
    work = Path(tempfile.mkdtemp(prefix="stockade-recall-"))
    for item in inputs:
        into = work / item.name
        into.mkdir(parents=True)
        extract(git_dir(args.mirrors, item), item, into)
        rendered = work / f"{item.name}-rendered"
        render(into / item.target, rendered, env)
        report = stockade(args.stockade, rendered, env)
        ours = rules_by_object(report["findings"])
        refs = role_refs(rendered)
        n_hits = n_found = n_designed = 0
        for hit in checkov(args.checkov, rendered, env):
            check = hit["check_id"]
            if check not in CHECKS:
                other[check] += 1
                continue
            obj = object_of(hit, ours)
            n_hits += 1
            hits[check] += 1
            role = refs.get(obj)  # a hit on a binding is found on the role it binds too
            if ours.get(obj, set()) & CHECKS[check][1] or (role and ours.get(role, set()) & CHECKS[check][1]):
                found[check] += 1
                n_found += 1
            elif check in BY_DESIGN and noted(report, check, obj):
                designed[check] += 1
                n_designed += 1
                by_design.append(f"{item.name}: {check} ({CHECKS[check][0]}) on {'/'.join(obj)}")
            else:
                missed.append(f"{item.name}: {check} ({CHECKS[check][0]}) on {'/'.join(obj)}")
        per_input.append((item.name, n_hits, n_found, n_designed))
    head = "| {} | Checkov hits compared | found by stockade | not reported by design | missed |"
    print(head.format("input") + "\n|---|---:|---:|---:|---:|")
    for name, n, k, d in per_input:
        print(f"| {name} | {n} | {k} | {d} | {n - k - d} |")
    total, total_found, total_designed = sum(hits.values()), sum(found.values()), sum(designed.values())
    print(
        f"| **all** | {total} | {total_found} | {total_designed} | {total - total_found - total_designed} |"
    )
    print("\n" + head.format("Checkov check | control") + "\n|---|---|---:|---:|---:|---:|")
    for check in sorted(hits, key=lambda c: (c.startswith("CKV2"), int(c.rsplit("_", 1)[1]))):
        n, k, d = hits[check], found[check], designed[check]
        print(f"| {check} | {CHECKS[check][0]} | {n} | {k} | {d} | {n - k - d} |")
    if designed:
        print("\nBy design: " + "; ".join(f"{c}: {BY_DESIGN[c]}" for c in sorted(designed)))
    if other:
        print(
            "\nNot compared: "
            + ", ".join(
                f"{c} ({n}: {NOT_COMPARED.get(c, 'no stockade control')})" for c, n in sorted(other.items())
            )
        )
    if args.misses:
        for title, lines in (("Missed", missed), ("Not reported by design", by_design)):
            if lines:
                print(f"\n### {title}\n")
                for line in lines:
                    print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
