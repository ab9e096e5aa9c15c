"""Engine error messages, one line each, without the input's values.

regorus errors are multi-line, may carry a Rust backtrace (with ``RUST_BACKTRACE`` set), and quote
runtime values: ``Got `"AZURE_CLIENT_SECRET=…"` instead``. Messages reach stderr, reports and the
webhook's answer, so an evaluation error keeps the rule, the Rego position and the kind of problem,
and each quoted value becomes its type.
"""

from __future__ import annotations

import re

import orjson

from stockade.policies.model import json_type_name

_QUOTED = re.compile(r"`([^`]*)`")
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*")


def _type_of(text: str) -> str:
    try:
        return json_type_name(orjson.loads(text)).replace("a list", "an array")
    except orjson.JSONDecodeError:
        return "a value"


def redact_values(line: str) -> str:
    """Quoted values in an engine message (regorus writes ``Got `"AZURE_CLIENT_SECRET=…"` ``) become
    their type; quoted names (builtins, rules) stay. The object's values never reach a report."""
    return _QUOTED.sub(
        lambda m: m.group(0) if _IDENTIFIER.fullmatch(m.group(1)) else _type_of(m.group(1)), line
    )


def evaluation_message(exc: BaseException) -> str:
    """An evaluation error's :func:`engine_message`, with values from the input replaced by their
    types (:func:`redact_values`)."""
    return redact_values(engine_message(exc))


def engine_message(exc: BaseException) -> str:
    """regorus errors are multi-line and may carry a Rust backtrace: keep the message, one line
    (the whole text, backtrace included, goes to the debug log only)."""
    # imported here: logging costs 1.5 ms at start-up, and a scan without an engine error never logs
    import logging

    full = str(exc)
    log = logging.getLogger("stockade.engine")
    if log.isEnabledFor(logging.DEBUG):
        log.debug("engine error, in full: %s", full)
    text = full.split("Stack backtrace:", 1)[0]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("|")]
    error = next((ln for ln in lines if ln.startswith("error:")), None)
    where = next((ln[3:].strip() for ln in lines if ln.startswith("-->")), None)
    if error is not None:
        return f"{where}: {error[6:].strip()}" if where else error[6:].strip()
    return " ".join(lines)
