"""Precision of `stockade scan` on real public manifests, against a hand-labelled sample (issue 37).

    .venv/bin/python bench/precision.py --mirrors /work/.mirror
    .venv/bin/python bench/precision.py --mirrors DIR --input kube-prometheus --unlabelled
    .venv/bin/python bench/precision.py --help

For every input of bench/precision/inputs.json (repository, commit, paths, what to scan), the
benchmark extracts the paths from a bare git mirror (`DIR/owner+name/repo` or `DIR/owner+name`, with
`git archive COMMIT PATH…`: the upstream manifests are never copied into this repository), runs
`stockade scan TARGET --no-config -f json --fail-on never` on them (stockade renders a Chart.yaml
with `helm template` and a kustomization.yaml with `kubectl kustomize` itself; `--tools DIR` puts
helm and kubectl first on PATH, by default `.tools/bin`), and compares the findings with
bench/precision/labels.jsonl.

A finding's label key is stable across runs: input, rule id, kind, namespace, name, field path and
pod template (never the file or the line); two findings with one key are told apart by `#2`, `#3`
in the order of the report. Each label is `true` (a real problem worth a reviewer's time), `wrong`
(states a false fact about the object) or `noise` (true, but not worth reading), with a reason.

It prints, per input and per rule: findings, deny findings, labelled true/wrong/noise, unlabelled,
precision = true / labelled, and the wrong and noise shares of the labelled; then every finding
labelled wrong or noise. It is a benchmark, not a test: it exits 0 whatever it measures, 2 on a
usage error (an unknown input, a missing mirror, a labels file it cannot read).
`--unlabelled` prints the findings of the chosen inputs that no label covers, one JSON stub per
line, ready to judge and append to the labels file.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "precision"
LABELS = ("true", "wrong", "noise")


class UsageError(Exception):
    """Bad command line or data: one line, exit 2."""


@dataclass
class Input:
    name: str
    repo: str  # https URL
    commit: str
    paths: list[str]  # extracted with git archive
    target: str  # what stockade scans, relative to the extraction
    render: str  # how it is rendered, for the record

    @property
    def mirror_name(self) -> str:
        owner, name = self.repo.rstrip("/").removesuffix(".git").split("/")[-2:]
        return f"{owner}+{name}"


@dataclass
class Tally:
    findings: int = 0
    deny: int = 0
    labels: collections.Counter[str] = field(default_factory=collections.Counter)
    unlabelled: int = 0

    def add(self, action: str, label: str | None) -> None:
        self.findings += 1
        self.deny += action == "deny"
        if label is None:
            self.unlabelled += 1
        else:
            self.labels[label] += 1

    def row(self, name: str) -> str:
        n = sum(self.labels.values())
        t, w, z = (self.labels[k] for k in LABELS)

        def share(k: int) -> str:
            return f"{100 * k / n:.1f} %" if n else "-"

        return (
            f"| {name} | {self.findings} | {self.deny} | {t} | {w} | {z} | {self.unlabelled} "
            f"| {share(t)} | {share(w)} | {share(z)} |"
        )


HEADER = (
    "| {} | findings | deny | true | wrong | noise | unlabelled | precision | wrong share | noise share |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def load_inputs(path: Path) -> list[Input]:
    try:
        raw = json.loads(path.read_text())
        return [Input(**entry) for entry in raw["inputs"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: cannot read the inputs ({exc})") from None


def load_labels(path: Path) -> dict[str, dict[str, str]]:
    labels: dict[str, dict[str, str]] = {}
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            key, label, reason = entry["key"], entry["label"], entry["reason"]
        except (ValueError, KeyError, TypeError):
            raise UsageError(f"{path}:{number}: not a label line (key, label, reason)") from None
        if label not in LABELS or not reason:
            raise UsageError(f"{path}:{number}: label must be one of {', '.join(LABELS)}, with a reason")
        if key in labels:
            raise UsageError(f"{path}:{number}: {key} is labelled twice")
        labels[key] = entry
    return labels


def git_dir(mirrors: Path, item: Input) -> Path:
    base = mirrors / item.mirror_name
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    raise UsageError(f"no git mirror of {item.repo} at {base} (fetch it, or leave out --input {item.name})")


def extract(gd: Path, item: Input, into: Path) -> str:
    """Extract the input's paths at its commit (HEAD, with a note, when the mirror lacks it)."""
    commit = item.commit
    has = subprocess.run(
        ["git", "--git-dir", str(gd), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True
    )
    if has.returncode != 0:
        commit = subprocess.run(
            ["git", "--git-dir", str(gd), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        print(
            f"note: {item.name}: the labels were made at {item.commit[:12]}, which {gd} lacks; "
            f"scanning HEAD {commit[:12]} (expect unlabelled findings)",
            file=sys.stderr,
        )
    archive = subprocess.run(
        ["git", "--git-dir", str(gd), "archive", "--format=tar", commit, *item.paths], capture_output=True
    )
    if not archive.stdout:
        raise UsageError(f"{item.name}: git archive gave nothing: {archive.stderr.decode().strip()}")
    # a mirror with missing blobs elsewhere makes git archive complain but still write our paths
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return commit


def init_config(stockade: str, target: Path, env: dict[str, str]) -> Path:
    """The stockade.yaml a user has after `stockade init` in the scanned folder (its registries)."""
    where = target if target.is_dir() else target.parent
    config = Path(tempfile.mkdtemp(prefix="stockade-init-")) / "stockade.yaml"
    done = subprocess.run(
        [stockade, "init", "-o", str(config)], cwd=where, capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        raise UsageError(f"stockade init in {where} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return config


def scan(
    stockade: str, target: Path, env: dict[str, str], config: Path | None = None
) -> list[dict[str, Any]]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        run = subprocess.run(
            [
                stockade,
                "scan",
                str(target),
                *(["--config", str(config)] if config is not None else ["--no-config"]),
                "-f",
                "json",
                "--fail-on",
                "never",
                "-o",
                out.name,
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        if run.returncode != 0:
            raise UsageError(f"stockade scan {target} exited {run.returncode}: {run.stderr.strip()[-300:]}")
        report = json.loads(Path(out.name).read_text())
    findings: list[dict[str, Any]] = report["findings"]
    return findings


def keys_of(input_name: str, findings: list[dict[str, Any]]) -> list[str]:
    seen: collections.Counter[str] = collections.Counter()
    keys = []
    for f in findings:
        r, loc = f["resource"], f["location"]
        base = "|".join(
            [
                input_name,
                f["rule"]["id"],
                r["kind"],
                r.get("namespace") or "",
                r["name"],
                loc.get("path") or "",
                loc.get("template") or "",
            ]
        )
        seen[base] += 1
        keys.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return keys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of bare git mirrors owner+name")
    parser.add_argument("--inputs", type=Path, default=DATA / "inputs.json")
    parser.add_argument("--labels", type=Path, default=DATA / "labels.jsonl")
    parser.add_argument("--input", action="append", help="only this input (repeatable)")
    parser.add_argument("--stockade", default=str(Path(sys.executable).parent / "stockade"))
    parser.add_argument("--tools", type=Path, default=ROOT / ".tools" / "bin", help="helm, kubectl")
    parser.add_argument("--unlabelled", action="store_true", help="print unlabelled findings as stubs")
    parser.add_argument("--keep", type=Path, help="extract into this folder and keep it")
    parser.add_argument(
        "--init-config",
        action="store_true",
        help="scan with the stockade.yaml `stockade init` writes in each input (a user's first config) "
        "instead of --no-config",
    )
    args = parser.parse_args(argv)
    try:
        return run(args)
    except UsageError as exc:
        print(f"precision: {exc}", file=sys.stderr)
        return 2


def chosen_inputs(args: argparse.Namespace) -> tuple[list[Input], dict[str, str]]:
    """The inputs `--input` names (all by default), and the environment with `--tools` first on PATH;
    UsageError for an unknown input or a --mirrors that is not a folder."""
    inputs = load_inputs(args.inputs)
    if args.input:
        unknown = set(args.input) - {i.name for i in inputs}
        if unknown:
            raise UsageError(f"unknown input {', '.join(sorted(unknown))}")
        inputs = [i for i in inputs if i.name in args.input]
    if not args.mirrors.is_dir():
        raise UsageError(f"--mirrors {args.mirrors}: not a folder")
    env = dict(os.environ)
    env["PATH"] = f"{args.tools}{os.pathsep}{env.get('PATH', '')}"
    return inputs, env


def run(args: argparse.Namespace) -> int:
    inputs, env = chosen_inputs(args)
    labels = load_labels(args.labels)
    per_input: dict[str, Tally] = {}
    per_rule: dict[str, Tally] = collections.defaultdict(Tally)
    total = Tally()
    flagged: list[tuple[str, dict[str, Any], dict[str, str]]] = []
    stubs: list[dict[str, str]] = []
    used: set[str] = set()
    commits: dict[str, str] = {}
    work = args.keep or Path(tempfile.mkdtemp(prefix="stockade-precision-"))
    for item in inputs:
        gd = git_dir(args.mirrors, item)
        into = work / item.name
        into.mkdir(parents=True, exist_ok=True)
        commits[item.name] = extract(gd, item, into)
        config = init_config(args.stockade, into / item.target, env) if args.init_config else None
        findings = scan(args.stockade, into / item.target, env, config)
        tally = per_input[item.name] = Tally()
        for key, f in zip(keys_of(item.name, findings), findings, strict=True):
            entry = labels.get(key)
            used.add(key)
            label = entry["label"] if entry else None
            for t in (tally, per_rule[f["rule"]["id"]], total):
                t.add(f["action"], label)
            if entry and label != "true":
                flagged.append((key, f, entry))
            if entry is None:
                stubs.append({"key": key, "label": "", "reason": "", "message": f["message"]})
    if args.unlabelled:
        for stub in stubs:
            print(json.dumps(stub))
        return 0
    print(f"stockade: {args.stockade}; labels: {args.labels}; extracted into {work}\n")
    print("| input | repository | commit | scanned | rendered |\n|---|---|---|---|---|")
    for item in inputs:
        print(f"| {item.name} | {item.repo} | {commits[item.name][:12]} | `{item.target}` | {item.render} |")
    print("\n" + HEADER.format("input"))
    for name, tally in per_input.items():
        print(tally.row(name))
    print(total.row("**all**"))
    print("\n" + HEADER.format("rule"))
    for rule in sorted(per_rule):
        print(per_rule[rule].row(rule))
    print(total.row("**all**"))
    if flagged:
        print("\n### Findings labelled wrong or noise\n")
        for key, f, entry in sorted(flagged, key=lambda x: (x[2]["label"], x[0])):
            print(f"- **{entry['label']}** `{key}`: {f['message']}  \n  {entry['reason']}")
    stale = sorted(k for k in labels if k.split("|")[0] in commits and k not in used)
    if stale:
        print(f"\n{len(stale)} labels match no finding of this run (a rule changed, or the input did):")
        for key in stale:
            print(f"- `{key}` ({labels[key]['label']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
