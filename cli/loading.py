"""Config and library loading shared by the commands, with one-line errors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stockade.cli.errors import fail
from stockade.policies.config import Config, ConfigError, load_config
from stockade.policies.engine import PolicyError
from stockade.policies.evaluate import Evaluator


def load_evaluator(config_path: Path | None, policy_dirs: Sequence[Path]) -> tuple[Evaluator, Config]:
    try:
        config = load_config(config_path)
        return Evaluator.default(config, policy_dirs), config
    except (ConfigError, PolicyError) as exc:
        fail(str(exc))
