"""Config and library loading shared by the commands, with one-line errors."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stockade.cli.errors import fail

if TYPE_CHECKING:  # imported when a command runs, not for its --help
    from stockade.policies.config.settings import Config
    from stockade.policies.evaluate import Evaluator


def load_evaluator(
    config_path: Path | None, policy_dirs: Sequence[Path], opa_url: str | None = None
) -> tuple[Evaluator, Config]:
    from stockade.policies.config.settings import ConfigError, load_config
    from stockade.policies.engines.library import PolicyError
    from stockade.policies.evaluate import Evaluator

    try:
        config = load_config(config_path)
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
