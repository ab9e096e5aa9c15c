"""The `stockade` command (also installed as `kubectl-stockade`): parses arguments, calls packages.

Exit codes are part of the contract: 0 clean, 1 policy violations at or above --fail-on,
2 usage, configuration or input errors.

Commands are imported only when run: `stockade scan x.yaml` never imports the kubernetes client, the
webhook server or the Azure SDK, and `stockade --help` imports none of the command modules (their
one-line summaries are in :data:`COMMANDS`; a test keeps them equal to the modules' own). The
whole application (every command loaded) is :data:`app`, for tests and for `python -m`.
"""

# No `from __future__ import annotations`: typer evaluates string annotations of its commands at
# every start (cli/scan.py says more).
import enum
import importlib
import sys
from collections.abc import Collection
from typing import Annotated, Any, NamedTuple

import typer

from stockade.cli.collector import pause_collector, resume_collector
from stockade.cli.helptext import tidy
from stockade.cli.plugins import disable_pydantic_plugins

HELP = "One Rego policy library for AI compute clusters: CI scan, admission webhook, cluster audit."
HELP_OPTIONS = ["-h", "--help"]


class Command(NamedTuple):
    """Where a command lives: `attr` of `module`, a command function or (group) a Typer app (a
    NamedTuple: a frozen dataclass costs every start half a millisecond more to define)."""

    module: str
    attr: str
    group: bool
    summary: str


COMMANDS: dict[str, Command] = {
    "scan": Command(
        "stockade.cli.scan",
        "scan",
        False,
        "Scan Kubernetes manifests (YAML/JSON, Helm and Kustomize output) against the policy library.",
    ),
    "audit": Command(
        "stockade.cli.audit",
        "audit",
        False,
        "Audit live clusters (kubeconfig contexts) against the policy library: one report for the fleet.",
    ),
    "init": Command("stockade.cli.policy", "init", False, "Write a commented starter stockade.yaml."),
    "policy": Command(
        "stockade.cli.policy", "app", True, "The policy library: catalogue, explanations, Rego unit tests."
    ),
    "webhook": Command("stockade.cli.webhook", "app", True, "The validating admission webhook."),
    "rbac": Command(
        "stockade.cli.rbac",
        "app",
        True,
        "RBAC least privilege: who can do what, what a subject may do, escalation paths.",
    ),
    "egress": Command(
        "stockade.cli.egress", "app", True, "Egress: reachability of workloads under their network policies."
    ),
    "report": Command(
        "stockade.cli.report", "app", True, "Reports: merge per-cluster JSON reports into one fleet report."
    ),
}


def tool_version() -> str:
    # imported here: importlib.metadata costs 18 ms (it imports the email package), and a one-file
    # scan whose report does not show the version never asks for it
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("stockade")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def version_cmd() -> None:
    """Print the stockade version."""
    typer.echo(tool_version())


class Shell(enum.StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"
    pwsh = "pwsh"


def completion_cmd(
    shell: Annotated[
        Shell,
        typer.Argument(case_sensitive=False, metavar="SHELL", help="The shell to print the script for."),
    ],
) -> None:
    """Print the shell completion script for SHELL (as `kubectl completion SHELL` does).

    Install it with e.g. `stockade completion bash > /etc/bash_completion.d/stockade`, or
    `source <(stockade completion bash)` in ~/.bashrc. Unlike --show-completion, the shell is named,
    not guessed from the parent process (which is `sh` under make or CI).
    """
    from typer._completion_shared import get_completion_script

    script = get_completion_script(
        prog_name="stockade", complete_var="_STOCKADE_COMPLETE", shell=shell.lower()
    )
    typer.echo(script)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"stockade {tool_version()}")
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """The options of `stockade` itself (the help text is :data:`HELP`)."""


def _stub(summary: str) -> Any:
    def placeholder() -> None:  # pragma: no cover - never run: a command that runs is loaded
        raise typer.Exit(2)

    placeholder.__doc__ = summary
    return placeholder


def build(load: Collection[str] | None = None) -> typer.Typer:
    """The application with the commands in `load` imported (all when None); the others are listed by
    their summary only."""
    # with a command loaded, the root group gives each command taking --config a --no-config flag
    root = importlib.import_module("stockade.cli.loading").ConfigGroup if load is None or load else None
    application = typer.Typer(
        name="stockade",
        help=HELP,
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        cls=root,
        # -h as well as --help, on every command (click's subcommand contexts inherit the names)
        context_settings={"help_option_names": HELP_OPTIONS},
    )
    application.callback()(_root)
    for name, command in COMMANDS.items():
        if load is None or name in load:
            target = getattr(importlib.import_module(command.module), command.attr)
            if command.group:
                application.add_typer(target, name=name)
            else:
                application.command(name)(target)
        elif command.group:
            application.add_typer(
                typer.Typer(help=command.summary, no_args_is_help=True, rich_markup_mode=None), name=name
            )
        else:
            application.command(name)(_stub(command.summary))
    application.command("version")(version_cmd)
    application.command("completion")(completion_cmd)
    return application


def _requested(argv: list[str]) -> set[str]:
    """The command `argv` runs (its first word), or none for `stockade --help` and mistakes."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return {first} if first in COMMANDS else set()


def _completing() -> list[str] | None:
    """The words typed so far when a shell asks for completions (typer's completion scripts set
    `_<PROG>_COMPLETE` and pass the line in COMP_WORDS (bash) or _TYPER_COMPLETE_ARGS), else None:
    the command being completed is loaded, so its options complete too."""
    import os

    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "stockade"
    if f"_{prog}_COMPLETE".replace("-", "_").upper() not in os.environ:
        return None
    words = os.environ.get("COMP_WORDS") or os.environ.get("_TYPER_COMPLETE_ARGS") or ""
    return words.split()[1:]


_FULL: typer.Typer | None = None


def __getattr__(name: str) -> Any:
    """`app`: every command loaded (tests, `python -m stockade.cli.main`), built on first use."""
    global _FULL
    if name == "app":
        if _FULL is None:
            _FULL = build()
        return _FULL
    raise AttributeError(name)


def _no_engine_backtraces() -> None:
    """No Rust backtrace captured into regorus' errors, unless the user says otherwise
    (RUST_LIB_BACKTRACE kept as given). With RUST_BACKTRACE=1 in the environment, each error of the
    engine captured one: the compiled VM stopping at its instruction limit on a pod spec with many
    containers (the interpreter then answers) cost 130 ms the first time and 1.5 ms more each time
    after, for text no stockade message shows. Panics still print theirs (RUST_BACKTRACE)."""
    import os

    os.environ.setdefault("RUST_LIB_BACKTRACE", "0")


def main(argv: list[str] | None = None) -> None:
    disable_pydantic_plugins()  # stockade.cli.run did it before anything was imported, if it ran
    _no_engine_backtraces()
    args = sys.argv[1:] if argv is None else argv
    completing = _completing()
    requested = _requested(args if completing is None else completing)
    # the collector (paused by the executables, stockade.cli.run): a scan resumes it before it reads
    # anything, every other command runs with it as before
    if requested == {"scan"}:
        pause_collector()
    else:
        resume_collector()
    application = build(requested)
    command = tidy(typer.main.get_command(application))
    try:
        command.main(args=args)
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)
    except Exception as exc:
        from concurrent.futures.process import BrokenProcessPool

        if not isinstance(exc, BrokenProcessPool):
            raise
        # a worker was killed (out of memory, a signal): nothing was decided, which is not "clean"
        typer.echo(
            "stockade: error: a worker process ended abruptly (killed, or out of memory); no verdict. "
            "Run again with --workers 1, or on fewer files at a time",
            err=True,
        )
        sys.exit(2)
    finally:
        resume_collector()


if __name__ == "__main__":
    main()
