"""Which engine a gate evaluates on: the embedded one, the same in a child process with a deadline
(the webhook), or a remote OPA server. The one place that knows every implementation."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stockade.policies.config.settings import Config
from stockade.policies.engines.base import Engine, enabled_rules
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import Library


def build_engine(
    library: Library,
    config: Config,
    policy_dirs: Sequence[Path] = (),
    *,
    opa_url: str | None = None,
    isolated: bool = False,
) -> Engine:
    """``opa_url`` evaluates on an OPA server; ``isolated`` runs the embedded engine in a child process
    with the config's admission evaluation timeout (the webhook; see :mod:`.process`)."""
    enabled = enabled_rules(config, library)
    # The remote and the isolated engines are imported when chosen: the OPA client (aiohttp) takes
    # longer to import than a one-file scan takes in all.
    if opa_url is not None:
        from stockade.policies.engines.opa import RemoteOpaEngine

        return RemoteOpaEngine(library, opa_url, set(enabled))
    if isolated:
        from stockade.policies.engines.process import ProcessEngine

        return ProcessEngine(library, config, policy_dirs, config.admission.evaluation_timeout_seconds)
    return EmbeddedEngine(library, config.rule_data(), enabled)
