"""Config and library loading shared by the commands, with one-line errors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stockade.cli.errors import fail
from stockade.policies.config import Config, ConfigError, load_config
from stockade.policies.engine import PolicyError
from stockade.policies.evaluate import Evaluator


def load_evaluator(
    config_path: Path | None, policy_dirs: Sequence[Path], opa_url: str | None = None
) -> tuple[Evaluator, Config]:
    try:
        config = load_config(config_path)
        return Evaluator.default(config, policy_dirs, opa_url=opa_url), config
    except (ConfigError, PolicyError, ValueError) as exc:
        fail(str(exc))
