"""Config and library loading shared by the commands, with one-line errors.

**Which stockade.yaml a command uses.** `--config FILE` names it. Without it, the command looks for
`stockade.yaml` or `.stockade.yaml` in the working directory, then in each parent up to the root of
the repository (the first directory holding `.git`, a directory or a worktree's file) or of the
file system, and uses the first it finds, saying which on stderr (`stockade: config: ./stockade.yaml`;
stdout is the report's). Both names in one directory are an error naming both. `--no-config` uses
none: the built-in defaults. A config above the repository is never picked up, so a checkout scans
the same in CI as on a laptop with other files in its home directory (Checkov reads `.checkov.yaml`,
kube-linter `.kube-linter.yaml`, the same way).

Every command with a `--config` option gets `--no-config` from :class:`ConfigGroup`, the root
group's class: the flag is added to the built command tree, so the command modules need not declare it.
"""

# No `from __future__ import annotations`: typer evaluates string annotations of its commands at
# every start (cli/scan.py says more).
import enum
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from stockade.cli.errors import fail

if TYPE_CHECKING:  # imported when a command runs, not for its --help
    from stockade.policies.config.settings import Config
    from stockade.policies.evaluate import Evaluator

CONFIG_NAMES = ("stockade.yaml", ".stockade.yaml")
NO_CONFIG = "--no-config"
#: --no-config was given to the command being run (reset by :class:`ConfigGroup` for each run)
_no_config = False


def _set_no_config(value: bool) -> bool:
    global _no_config
    _no_config = _no_config or value
    return value


def no_config_param() -> Any:
    """A `--no-config` flag, built by typer like every other option (typer's click is its own)."""

    def carrier(
        no_config: Annotated[
            bool,
            typer.Option(
                NO_CONFIG,
                callback=_set_no_config,
                expose_value=False,
                help="Use no stockade.yaml (the built-in defaults), even if one would be found.",
            ),
        ] = False,
    ) -> None:
        pass  # pragma: no cover - never run: only its parameter is taken

    holder = typer.Typer()
    holder.command()(carrier)
    return typer.main.get_command(holder).params[0]


def add_no_config(command: Any) -> None:
    """Give every command below `command` (a click tree) that has `--config` a `--no-config` flag."""
    for sub in (getattr(command, "commands", None) or {}).values():
        add_no_config(sub)
    opts = {o for p in command.params for o in p.opts}
    if "--config" in opts and NO_CONFIG not in opts:
        command.params.append(no_config_param())


class ConfigGroup(TyperGroup):
    """The root group: its commands that take `--config` also take `--no-config`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        add_no_config(self)

    def invoke(self, ctx: Any) -> Any:
        global _no_config
        _no_config = False  # before the command's options are parsed (a process may run several)
        return super().invoke(ctx)


def find_config(start: Path) -> Path | None:
    """The stockade.yaml (or .stockade.yaml) nearest `start`, up to the repository or file-system root."""
    directory = start.resolve()
    while True:
        found = [directory / n for n in CONFIG_NAMES if (directory / n).is_file()]
        if len(found) > 1:
            fail(f"both {found[0]} and {found[1]} exist: remove one, or give --config FILE")
        if found:
            return found[0]
        if (directory / ".git").exists() or directory.parent == directory:
            return None
        directory = directory.parent


def _shown(path: Path) -> str:
    relative = os.path.relpath(path)
    return relative if relative.startswith("..") else f".{os.sep}{relative}"


def config_file(given: Path | None) -> Path | None:
    """The config a command uses: `given` (--config), none with --no-config, else the one found
    from the working directory up (announced on stderr)."""
    if given is not None:
        if _no_config:
            fail("give --config FILE or --no-config, not both")
        return given
    if _no_config:
        return None
    found = find_config(Path.cwd())
    if found is not None:
        typer.echo(f"stockade: config: {_shown(found)}", err=True)
    return found


def load_evaluator(
    config_path: Path | None, policy_dirs: Sequence[Path], opa_url: str | None = None
) -> tuple["Evaluator", "Config"]:
    from stockade.policies.config.settings import ConfigError, load_config
    from stockade.policies.engines.library import PolicyError
    from stockade.policies.evaluate import Evaluator

    try:
        config = load_config(config_file(config_path))
        return Evaluator.default(config, policy_dirs, opa_url=opa_url), config
    except (ConfigError, PolicyError, ValueError) as exc:
        fail(str(exc))


class EngineName(enum.StrEnum):
    embedded = "embedded"
    opa = "opa"


EngineOption = Annotated[
    EngineName, typer.Option("--engine", help="embedded (regorus) or opa (a running OPA server).")
]
OpaUrlOption = Annotated[
    str | None, typer.Option("--opa-url", help="With --engine opa: http(s)://HOST:PORT of the server.")
]


def remote_url(engine: EngineName, opa_url: str | None) -> str | None:
    """The OPA server to evaluate on, or None for the embedded engine; bad combinations fail."""
    if engine is EngineName.opa and not opa_url:
        fail("--engine opa needs --opa-url (an OPA server holding `stockade policy bundle`)")
    if opa_url and engine is not EngineName.opa:
        fail("--opa-url needs --engine opa")
    return opa_url if engine is EngineName.opa else None


def read_objects(paths: Sequence[str], exclude: Sequence[str] = ()) -> list[Mapping[str, Any]]:
    """The Kubernetes objects of manifest files for the commands that need all of them (`rbac`,
    `egress`): an input error stops the command (a missing object changes the answer), files holding
    no object are skipped, and finding no object at all is an error, never an empty answer."""
    from stockade.policies.model import InputError
    from stockade.scanner.sources.base import Skipped
    from stockade.scanner.sources.files import FileSource

    objects: list[Mapping[str, Any]] = []
    skipped: list[Skipped] = []
    for item in FileSource(list(paths), exclude=exclude):
        if isinstance(item, InputError):
            fail(str(item))
        elif isinstance(item, Skipped):
            skipped.append(item)
        else:
            objects.append(item.obj)
    if not objects:
        detail = (
            f": {skipped[0]}" + (f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else "")
            if skipped
            else ""
        )
        fail(f"no Kubernetes object found in {' '.join(paths)}{detail}")
    return objects
