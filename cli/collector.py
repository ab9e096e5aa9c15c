"""Python's cyclic garbage collector while `stockade scan` starts.

Parsing the options (typer builds a pydantic adapter per option), importing typer, pydantic, rich and
the pipeline, and loading the config and the policy library allocate some 200,000 objects that live
until the end of the run; the collector walked them again and again, about 15 ms of a one-file scan
(the pre-commit case), and found no garbage. So the executables (:func:`stockade.cli.run`) pause it
before anything is imported; `main` resumes it at once for every command but `scan`, and the scan
resumes it before it reads anything (freezing what start-up made, as `scanner.scan.run_scan` freezes
what it reads and unfreezes at its end), so memory over a large scan is what it was. `main` resumes
it in any case when the command ends, an error included. Only the reference cycles made during
start-up wait longer to be freed (reference counting frees everything else at once).

A leaf module (only :mod:`gc`): it is imported before typer.
"""

from __future__ import annotations

import gc

#: the collector was paused by :func:`pause_collector` and not resumed yet
_paused = False


def pause_collector() -> None:
    """Pause the collector (nothing if it is off already: then it stays as it was)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collector(*, freeze: bool = False) -> None:
    """Undo :func:`pause_collector` (nothing if it did not pause the collector). With `freeze`, the
    objects made so far are first moved out of the collector's sight (`gc.freeze`): otherwise the
    first collection after resuming walks all of them at once."""
    global _paused
    if _paused:
        _paused = False
        if freeze:
            gc.freeze()
        gc.enable()
