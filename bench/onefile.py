"""The pre-commit case: wall time of one command on one small file, side by side in one run.

Measures, as separate processes (what a pre-commit hook or a CI step pays), the medians of wall and
CPU time (user + system: what a shared machine's other load inflates less) of --repeat rounds (each
round runs every command once, in alternating order):

- `python -c pass` (the interpreter's own start);
- `python -c "import yaml, regorus"` (the floor of any Python scanner using the embedded engine);
- `stockade --help` and `stockade scan --help`;
- the third-party libraries `stockade scan` imports (typer, rich, pydantic, yaml, regorus, orjson);
- the same libraries in use: a typer command with a path argument and an option, which builds one
  pydantic model and prints a rich table (typer and pydantic import most of themselves on first use:
  typer parses each option through a pydantic TypeAdapter; the import floor leaves that out);
- `stockade scan ONE.yaml` (a Deployment with findings), and optionally a --baseline stockade's;
- optionally `checkov -f ONE.yaml --framework kubernetes` (--checkov PATH: an executable or a venv).

    .venv/bin/python bench/onefile.py [--repeat 7] [--checkov .bench/checkov]

Children run with Python's bytecode cache on, as an installed package has it (pip compiles .pyc files
at install time), even where the environment sets PYTHONDONTWRITEBYTECODE (this machine does, which
made every earlier run recompile stockade's modules); the warm-up run fills the cache of an editable
install. --no-bytecode-cache measures with the variable as given.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:latest
          securityContext: {privileged: true}
"""


#: the third-party modules `stockade scan FILE` imports: the floor of any scan with this stack
#: (typer >= 0.29 coerces every option through pydantic, which the config models need anyway)
LIBRARIES = "import typer, typer._adapters, rich.console, rich.table, pydantic, yaml, regorus, orjson"
#: the same libraries in use, the least a typer command that builds a model and prints a table does
IN_USE = (
    LIBRARIES
    + """
from pathlib import Path
app = typer.Typer(add_completion=False)
class Model(pydantic.BaseModel):
    x: int = 0
@app.command()
def scan(paths: list[Path], output: str = "table") -> None:
    Model()
    rich.console.Console().print(rich.table.Table("a"))
app()
"""
)


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, from os.wait4) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def _time_all(
    rows: list[tuple[str, list[str]]], repeat: int, env: dict[str, str]
) -> dict[str, tuple[list[float], list[float]]]:
    """Every command once per round, rounds in alternating order: a slower minute of a shared machine
    weighs on each command alike. Wall and CPU seconds of each run."""
    runs: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label, _ in rows}
    for _, cmd in rows:
        _run(cmd, env)  # warm the page and bytecode caches
    for i in range(repeat):
        for label, cmd in rows if i % 2 == 0 else reversed(rows):
            wall, cpu = _run(cmd, env)
            runs[label][0].append(wall)
            runs[label][1].append(cpu)
    return runs


def _executable(name: str, hint: str | None) -> str | None:
    if hint:
        path = Path(hint)
        if path.is_dir():
            path = path / name if (path / name).exists() else path / "bin" / name
        return str(path) if path.exists() else None
    return shutil.which(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--checkov", help="checkov executable or a venv holding it")
    parser.add_argument("--no-bytecode-cache", action="store_true", help="keep PYTHONDONTWRITEBYTECODE")
    parser.add_argument(
        "--baseline", help="another stockade executable (an older checkout's venv), side by side"
    )
    args = parser.parse_args(argv)
    env = dict(os.environ)
    if not args.no_bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    stockade = _executable("stockade", str(Path(sys.executable).parent)) or "stockade"
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp, "deploy.yaml")
        manifest.write_text(MANIFEST)
        rows: list[tuple[str, list[str]]] = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("python -c 'import yaml, regorus'", [sys.executable, "-c", "import yaml, regorus"]),
            ("the libraries a scan imports", [sys.executable, "-c", LIBRARIES]),
            ("the libraries in use", [sys.executable, "-c", IN_USE, str(manifest)]),
            ("stockade --help", [stockade, "--help"]),
            ("stockade scan --help", [stockade, "scan", "--help"]),
            ("stockade scan deploy.yaml", [stockade, "scan", str(manifest)]),
        ]
        if args.baseline:
            rows.append(("baseline: stockade scan deploy.yaml", [args.baseline, "scan", str(manifest)]))
        checkov = _executable("checkov", args.checkov) if args.checkov else None
        if checkov:
            rows.append(
                ("checkov -f deploy.yaml", [checkov, "-f", str(manifest), "--framework", "kubernetes"])
            )
        cache = "off (PYTHONDONTWRITEBYTECODE)" if "PYTHONDONTWRITEBYTECODE" in env else "on"
        print(
            f"python {sys.version.split()[0]}; {os.cpu_count()} CPUs; bytecode cache {cache}; "
            f"medians of {args.repeat} runs"
        )
        results, cpus = {}, {}
        print(f"{'command':<38} {'wall':>7}   {'CPU':>7}   wall of each run")
        for label, (walls, cpu) in _time_all(rows, args.repeat, env).items():
            results[label] = median = statistics.median(walls)
            cpus[label] = statistics.median(cpu)
            print(
                f"{label:<38} {median:7.3f} s {cpus[label]:7.3f} s   {', '.join(f'{r:.3f}' for r in walls)}"
            )
        floor, cpu_floor = results["the libraries a scan imports"], cpus["the libraries a scan imports"]
        for label in ("stockade scan deploy.yaml", "baseline: stockade scan deploy.yaml"):
            if label in results:
                print(
                    f"{label}: {results[label] - floor:.3f} s above the libraries' floor, "
                    f"{results[label] / floor:.2f}x it (CPU {cpus[label] / cpu_floor:.2f}x); "
                    f"{results[label] - results['the libraries in use']:.3f} s above them in use"
                )
        if "baseline: stockade scan deploy.yaml" in results:
            ratio = results["stockade scan deploy.yaml"] / results["baseline: stockade scan deploy.yaml"]
            print(f"stockade scan / baseline: {ratio:.2f}x wall")
        if "checkov -f deploy.yaml" in results:
            ratio = results["checkov -f deploy.yaml"] / results["stockade scan deploy.yaml"]
            print(f"checkov / stockade scan: {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
