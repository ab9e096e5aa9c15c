"""The `stockade` command (also installed as `kubectl-stockade`): parses arguments, calls packages.

Exit codes are part of the contract: 0 clean, 1 policy violations at or above --fail-on,
2 usage, configuration or input errors.
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

import typer

from stockade.cli import audit, egress, policy, rbac, scan, webhook

app = typer.Typer(
    name="stockade",
    help="One Rego policy library for AI compute clusters: CI scan, admission webhook, cluster audit.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("scan")(scan.scan)
app.command("audit")(audit.audit)
app.command("init")(policy.init)
app.add_typer(policy.app, name="policy")
app.add_typer(webhook.app, name="webhook")
app.add_typer(rbac.app, name="rbac")
app.add_typer(egress.app, name="egress")


def tool_version() -> str:
    try:
        return version("stockade")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


@app.command("version")
def version_cmd() -> None:
    """Print the stockade version."""
    typer.echo(tool_version())


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)


if __name__ == "__main__":
    main()
