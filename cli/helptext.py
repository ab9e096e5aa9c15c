"""Help pages a person reads at 80 columns: metavars that name what goes there, not Python types.

Typer labels a value by its annotation (``<list[str]>``, ``<path>``, ``<int>``). :func:`tidy` walks
the built click command tree once and gives every option and argument a metavar in click's own style
(``--include GLOB``, ``--kubeconfig FILE``, ``[PATH]...``): named by :data:`METAVARS` where the value
has a meaning, else by its type. Choices keep their ``<a|b|c>`` list; flags show none.
"""

from __future__ import annotations

from typing import Any

#: what an option's value is, by its long name (else its type decides: PATH, TEXT, N)
METAVARS = {
    "--include": "GLOB",
    "--exclude": "GLOB",
    "--kustomize": "DIR",
    "--kustomize-dir": "DIR",
    "--helm": "CHART",
    "--values": "FILE",
    "--policy-dir": "DIR",
    "--certs-dir": "DIR",
    "--output-dir": "DIR",
    "--config": "FILE",
    "--output": "FILE",
    "--kubeconfig": "FILE",
    "--tls-cert": "FILE",
    "--tls-key": "FILE",
    "--context": "CONTEXT",
    "--cluster": "NAME",
    "--name": "NAME",
    "--namespace": "NAMESPACE",
    "--opa-url": "URL",
    "--image": "IMAGE",
    "--api-group": "GROUP",
    "--subresource": "SUBRESOURCE",
    "--framework": "FRAMEWORK",
    "--workload": "KIND",
    "--dns": "CIDR",
    "--apiserver-cidr": "CIDR",
    "--host": "ADDRESS",
}
_BY_TYPE = {"path": "PATH", "str": "TEXT", "int": "N", "float": "NUMBER"}


def _kind(param: Any) -> tuple[bool, str]:
    """(whether the value is one of fixed choices, its type's name: path, str, int...)."""
    desc = getattr(param, "type_descriptor", None)  # typer >= 0.2x: its own parameter classes
    if desc is not None:
        if desc.is_choice:
            return True, ""
        if desc.is_path:
            return False, "path"
        annotation = desc.annotation
        args = getattr(annotation, "__args__", None)
        if desc.is_list and args:
            annotation = args[0]
        return False, str(getattr(annotation, "__name__", annotation)).lower()
    kind = getattr(param, "type", None)  # click's parameters
    return type(kind).__name__ == "Choice", str(getattr(kind, "name", "") or "").lower()


def _metavar(param: Any) -> str | None:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    choice, kind = _kind(param)
    if choice:
        return None  # the choices are the best label
    if param.param_type_name == "argument":
        return str(param.name or "value").upper()
    long = next((o for o in param.opts if o.startswith("--")), "")
    if long in METAVARS:
        return METAVARS[long]
    return _BY_TYPE.get(kind, kind.upper() or "VALUE")


def tidy(command: Any) -> Any:
    """Set every parameter's metavar below `command` (a click command tree; in place) and return it."""
    for param in command.params:
        if param.metavar is None:
            label = _metavar(param)
            if label is None:
                continue
            param.metavar = label
            if param.param_type_name == "argument":
                # typer prints an argument's Python type after its name whatever its metavar says
                param.display_type_rich = lambda ctx=None: None
    for sub in getattr(command, "commands", {}).values():
        tidy(sub)
    return command
