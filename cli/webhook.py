"""`stockade webhook serve`: the admission gate."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from starlette.applications import Starlette

from stockade.admission.app import JSONLogFormatter, WebhookState, create_app
from stockade.cli.errors import fail
from stockade.cli.loading import load_evaluator
from stockade.policies.config import Config, load_config

app = typer.Typer(help="The validating admission webhook.", no_args_is_help=True)


def _logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONLogFormatter())
    root = logging.getLogger("stockade")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


@app.command("serve")
def serve(
    tls_cert: Annotated[Path, typer.Option("--tls-cert", help="Serving certificate (PEM).")],
    tls_key: Annotated[Path, typer.Option("--tls-key", help="Its private key (PEM).")],
    port: Annotated[int, typer.Option("--port")] = 8443,
    host: Annotated[str, typer.Option("--host")] = "0.0.0.0",
    workers: Annotated[int, typer.Option("--workers", help="Worker processes.")] = 1,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="stockade.yaml (hot-reloaded)")
    ] = None,
    policy_dir: Annotated[list[Path] | None, typer.Option("--policy-dir", help="Extra Rego rules.")] = None,
    no_inventory: Annotated[
        bool, typer.Option("--no-inventory", help="Run without a cluster (no namespace labels or facts).")
    ] = False,
    kubeconfig: Annotated[Path | None, typer.Option("--kubeconfig", help="Default: in-cluster.")] = None,
    context: Annotated[str | None, typer.Option("--context")] = None,
    no_evaluation: Annotated[
        bool, typer.Option("--no-evaluation", hidden=True, help="Benchmark floor: allow without evaluating.")
    ] = False,
) -> None:
    """Serve AdmissionReview v1 on https://HOST:PORT/validate (plus /healthz, /readyz, /metrics)."""
    for f in (tls_cert, tls_key):
        if not f.is_file():
            fail(f"{f}: no such file")
    if workers < 1:
        fail("--workers must be at least 1")
    load_evaluator(config, policy_dir or [])  # fail fast, in the parent, on a broken config or library
    dirs = tuple(policy_dir or ())

    def factory() -> Starlette:
        # Runs in each worker process, after the fork: the cache's threads must start here.
        _logging()
        cfg = load_config(config) if config else Config()
        state = WebhookState(config=cfg, config_path=config, policy_dirs=dirs, evaluation=not no_evaluation)
        if not no_inventory:
            from stockade.admission.inventory import InventoryCache

            if kubeconfig is not None or context is not None:
                cache = InventoryCache.from_kubeconfig(str(kubeconfig) if kubeconfig else None, context)
            else:
                cache = InventoryCache.in_cluster()
            cache.start()
            state.facts, state.ready, state.cache_age = cache, lambda: cache.synced, cache.age_seconds
            state.on_shutdown.append(cache.stop)
        return create_app(state)

    from stockade.admission.server import serve as run

    run(host, port, tls_cert, tls_key, factory, workers)
