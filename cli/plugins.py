"""The executables load no pydantic plugin.

pydantic loads every plugin that any installed distribution registers under the `pydantic` entry
point group, on the first model or adapter a process builds, and a plugin is handed every value each
model validates: in stockade that is the configuration, every AdmissionReview the webhook admits (a
Secret's data included) and the Azure and cluster objects an audit reads. A security tool does not run
code that merely being installed next to it buys a look at those: observability packages register
such plugins. Loading them also cost every start `importlib.metadata` (the email package, zipfile,
csv) and a walk over every distribution's entry points, about 18 ms of a one-file scan (the
pre-commit case) and more in a large environment.

So the command sets `PYDANTIC_DISABLE_PLUGINS=__all__` for itself and its child processes, and
:func:`stockade.cli.run` puts a loader that finds no plugins where pydantic looks for its loader
(`pydantic.plugin._loader`, imported by `pydantic.plugin._schema_validator` on first use) before
any model is built. A value of the variable the user set, even empty, is kept, and pydantic's own
loader then applies it (docs/ci.md). Only the command does this: a program that imports stockade as
a library keeps its own pydantic as it is. tests/cli/test_pydantic_plugins.py checks that the names pydantic
imports from its loader are the ones given here, so that a pydantic release that changes them fails
CI instead of the command line.

A leaf module (only the standard library): it is imported before pydantic.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterable
from typing import Any

#: the module pydantic imports its plugins through
LOADER = "pydantic.plugin._loader"


def _no_plugins() -> Iterable[Any]:
    return ()


#: pydantic's switch, which a user may set to keep plugins (any value, even empty)
SWITCH = "PYDANTIC_DISABLE_PLUGINS"


def disable_pydantic_plugins() -> None:
    """Make pydantic find no plugin in this process and its children, unless the user set
    :data:`SWITCH`. The loader is stood in only if pydantic has not imported its own yet (plugins it
    loaded stay loaded, and nothing is replaced under them)."""
    if SWITCH in os.environ:
        return
    os.environ[SWITCH] = "__all__"
    if LOADER in sys.modules:
        return
    loader = types.ModuleType(LOADER, "no pydantic plugin is loaded (stockade.cli.plugins)")
    loader.get_plugins = _no_plugins  # type: ignore[attr-defined]
    sys.modules[LOADER] = loader
