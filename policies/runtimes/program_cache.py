"""The compiled policy program, kept between runs: a one-file scan should not compile 120 modules.

Compiling the library for regorus' VM (and parsing it for the interpreter) is about a third of a
one-file scan. The compiled program is serialized (regorus' own binary form) into a `.compiled/`
folder **inside the installed package**, never into a shared or per-user cache: whoever can write
there can already change stockade's code, so the cache adds no way to change a verdict (a cache
restored from an untrusted CI branch, say, is not read). Where the package folder is not writable,
nothing is cached and every run compiles, as before.

The key is a SHA-256 over regorus' version, this module's and the compiler-facing modules' own
source, the entry points and every module's path and text: any change to the library, to a custom
rule, to the import expansion or to regorus compiles afresh. A file that does not deserialize is
ignored (and replaced). At most :data:`KEEP` programs are kept (one per library and set of custom
rules in use), the oldest removed.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import regorus

HERE = Path(__file__).resolve().parent
#: inside the installed stockade.policies package (module docstring)
FOLDER = HERE.parent / ".compiled"
KEEP = 8
#: the code that shapes what is compiled: a change to any of them is a change of program
_SOURCES = ("runtimes/program_cache.py", "runtimes/rego_imports.py", "engines/embedded.py")


def _regorus_build() -> str:
    """Which regorus build compiles the programs: its package files' names, sizes and modification
    times (another version or a rebuilt wheel is another build). Read from the file system rather
    than the distribution's metadata, whose lookup (importlib.metadata) costs a one-file scan 18 ms."""
    folder = Path(regorus.__file__).resolve().parent
    try:
        files = sorted(p for p in folder.iterdir() if p.is_file())
        return ";".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files)
    except OSError:  # pragma: no cover - an unreadable install: every build is another one
        return f"unreadable:{os.getpid()}"


def key(modules: Sequence[tuple[str, str]], entries: Sequence[str]) -> str:
    digest = hashlib.sha256()
    digest.update(_regorus_build().encode())
    for name in _SOURCES:
        try:
            digest.update((HERE.parent / name).read_bytes())
        except OSError:
            digest.update(name.encode())
    for entry in entries:
        digest.update(b"\0entry\0" + entry.encode())
    for path, text in modules:
        digest.update(b"\0module\0" + path.encode() + b"\0" + text.encode())
    return digest.hexdigest()


def load(program_key: str) -> Any:
    """The cached program of this :func:`key`, or None."""
    path = FOLDER / f"{program_key}.bin"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return deserialized(data)


def deserialized(data: bytes) -> Any:
    """The program of regorus' binary form ``data``, or None where regorus cannot restore it whole."""
    try:
        result = regorus.Program.deserialize_binary(data)
    except Exception:
        return None
    # (program, partial): a partial program (regorus could not restore it whole) is recompiled
    if isinstance(result, tuple):
        program, partial = result
        return None if partial else program
    return result


def keep(name: str, data: bytes) -> None:
    """`data` as the file `name` of :data:`FOLDER`, replaced in one rename (a reader sees the old
    file or the new one, never part of either); OSError where the folder is not writable."""
    FOLDER.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=FOLDER, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, FOLDER / name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def store(program_key: str, program: Any) -> None:
    """Keep `program` under its :func:`key` for the next run, atomically; silently nothing where that
    is not possible."""
    try:
        keep(f"{program_key}.bin", bytes(program.serialize_binary()))
        programs = sorted(FOLDER.glob("*.bin"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in programs[KEEP:]:
            old.unlink(missing_ok=True)
    except Exception:
        return
