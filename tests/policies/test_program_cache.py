"""The compiled program kept between runs (policies/runtimes/program_cache.py): same verdicts, never stale,
never trusted when damaged, and nothing cached where the package folder is not writable."""

from __future__ import annotations

import marshal
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from stockade.policies.engines import library as library_module
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import PolicyError, load_library
from stockade.policies.model import Resource
from stockade.policies.runtimes import program_cache

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ml"},
    "spec": {"containers": [{"name": "c", "image": "nginx", "securityContext": {"privileged": True}}]},
}


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(program_cache, "FOLDER", tmp_path / ".compiled")
    return tmp_path / ".compiled"


def _verdicts(engine: EmbeddedEngine) -> list[tuple[str, str]]:
    inp = {"object": POD, "pod": {"spec": POD["spec"], "metadata": POD["metadata"], "path": ["spec"]}}
    return sorted((v.rule.id, v.msg) for v in engine.evaluate(Resource(POD).kind, inp))


def test_a_second_engine_uses_the_cached_program_and_decides_the_same(folder: Path) -> None:
    library = load_library()
    first = EmbeddedEngine(library, {})
    assert first.uses_vm and len(list(folder.glob("*.bin"))) == 1
    second = EmbeddedEngine(library, {})
    assert second.uses_vm and second._engine is None  # no interpreter built: the program was loaded
    assert _verdicts(first) == _verdicts(second) != []


def test_a_damaged_program_is_ignored_and_replaced(folder: Path) -> None:
    library = load_library()
    EmbeddedEngine(library, {})
    (cached,) = folder.glob("*.bin")
    cached.write_bytes(b"not a program")
    engine = EmbeddedEngine(library, {})
    assert engine.uses_vm and engine._engine is not None  # compiled afresh
    assert cached.read_bytes() != b"not a program"
    assert _verdicts(engine)


def test_a_changed_custom_rule_compiles_afresh_and_a_broken_one_is_an_error(
    folder: Path, tmp_path: Path
) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "x.rego").write_text("package custom.x\nimport rego.v1\nok := true\n")
    EmbeddedEngine(load_library([rules]), {})
    (rules / "x.rego").write_text("package custom.x\nimport rego.v1\nok := \n")
    with pytest.raises(PolicyError, match=r"x\.rego"):
        EmbeddedEngine(load_library([rules]), {})


def test_nothing_is_cached_where_the_folder_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(program_cache, "FOLDER", blocker / ".compiled")  # under a file: never a folder
    engine = EmbeddedEngine(load_library(), {})
    assert engine.uses_vm and _verdicts(engine)


# ---- the METADATA of the library's rules, kept beside the programs (engines/library.py) ----------


def _rule_rego(severity: str) -> str:
    return (
        "# METADATA\n# title: Demo\n# custom:\n#   id: DEMO-001\n"
        f"#   severity: {severity}\n#   kinds: [Pod]\npackage demo.cache\n\nimport rego.v1\n\n"
        'deny contains {"msg": "demo"} if { input.object.kind == "Pod" }\n'
    )


def test_the_metadata_read_from_the_cache_is_the_metadata_read_from_the_files(folder: Path) -> None:
    first = load_library()
    cache = folder / "metadata.marshal"
    assert cache.is_file()
    (folder / "library.marshal").unlink()  # the files are read again, not the library's own cache
    second = load_library()  # every block from the cache
    assert second.rules == first.rules and len(second.rules) > 100
    # the blocks are taken from the cache (by their text's hash): a title planted there shows
    (folder / "library.marshal").unlink()
    known = marshal.loads(cache.read_bytes())
    key = next(k for k, v in known.items() if v["custom"]["id"] == "STK-POD-001")
    known[key] = {**known[key], "title": "planted"}
    cache.write_bytes(marshal.dumps(known))
    assert load_library().rules["STK-POD-001"].title == "planted"


def test_a_changed_metadata_block_is_read_again_never_taken_from_the_cache(
    folder: Path, tmp_path: Path
) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "demo.rego").write_text(_rule_rego("low"))
    assert load_library([rules]).rules["DEMO-001"].severity.name == "LOW"  # now in the cache
    (rules / "demo.rego").write_text(_rule_rego("critical"))
    assert load_library([rules]).rules["DEMO-001"].severity.name == "CRITICAL"


def test_a_damaged_metadata_cache_is_ignored_and_replaced(folder: Path) -> None:
    expected = load_library().rules
    cache = folder / "metadata.marshal"
    for damage in (b"", b"\x00not marshal", cache.read_bytes()[:100]):
        cache.write_bytes(damage)
        (folder / "library.marshal").unlink()  # the files are read again
        assert load_library().rules == expected
        assert cache.read_bytes() not in (b"", b"\x00not marshal") and len(cache.read_bytes()) > 100


def test_no_metadata_cache_where_the_folder_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(program_cache, "FOLDER", blocker / ".compiled")  # under a file: never a folder
    assert len(load_library().rules) > 100


# ---- the bundled library as read last time (engines/library.py _BundledCache) ---------------------


@pytest.fixture()
def bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: Path) -> Path:
    """A copy of the bundled library, read as the bundled one."""
    copy = tmp_path / "rego"
    shutil.copytree(library_module.BUNDLED_DIR, copy)
    monkeypatch.setattr(library_module, "BUNDLED_DIR", copy)
    return copy


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The .rego files load_library reads from now on."""
    read: list[str] = []
    original = library_module._read_module

    def counting(path: Path) -> Any:
        read.append(path.name)
        return original(path)

    monkeypatch.setattr(library_module, "_read_module", counting)
    return read


def test_the_library_restored_is_the_library_read_and_no_file_is_read_again(
    bundled: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = load_library()
    assert (folder / "library.marshal").is_file()
    read = _reads(monkeypatch)
    second = load_library()
    assert read == []
    assert second.modules == first.modules and second.rules == first.rules and len(second.rules) > 100
    assert list(second.rules) == list(first.rules)  # the same order: aggregates list rules in it
    assert all(r.file.startswith(str(bundled) + "/") for r in second.rules.values())


def test_a_changed_added_or_removed_file_reads_the_library_again(
    bundled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_library()
    privileged = bundled / "pod" / "privileged.rego"
    text = privileged.read_text()
    # the same size, another text: only the modification time (seconds, as Python's bytecode) tells
    swapped = text.replace("Privileged", "Privilegex", 1)
    assert len(swapped) == len(text) and swapped != text
    privileged.write_text(swapped)
    stat = privileged.stat()
    os.utime(privileged, (stat.st_atime, stat.st_mtime + 2))
    assert "Privilegex" in load_library().rules["STK-POD-003"].title
    read = _reads(monkeypatch)
    assert "Privilegex" in load_library().rules["STK-POD-003"].title and read == []
    (bundled / "pod" / "extra.rego").write_text(_rule_rego("low"))
    assert load_library().rules["DEMO-001"].severity.name == "LOW"
    (bundled / "pod" / "extra.rego").unlink()
    assert "DEMO-001" not in load_library().rules


def test_a_damaged_library_cache_is_ignored_and_replaced(bundled: Path, folder: Path) -> None:
    expected = load_library()
    cache = folder / "library.marshal"
    for damage in (b"", b"\x00not marshal", cache.read_bytes()[:100], marshal.dumps((1, 2))):
        cache.write_bytes(damage)
        again = load_library()
        assert again.rules == expected.rules and again.modules == expected.modules
        assert len(cache.read_bytes()) > 1000


def test_policy_directories_are_read_beside_a_restored_library(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_library()
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "demo.rego").write_text(_rule_rego("high"))
    read = _reads(monkeypatch)
    lib = load_library([rules])
    assert read == ["demo.rego"] and lib.rules["DEMO-001"].severity.name == "HIGH"
    assert "STK-POD-003" in lib.rules
    # the restored library's ids and packages are still taken
    (rules / "demo.rego").write_text(_rule_rego("high").replace("DEMO-001", "STK-POD-003"))
    with pytest.raises(PolicyError, match="STK-POD-003 is already defined"):
        load_library([rules])
    (rules / "demo.rego").write_text(_rule_rego("high").replace("demo.cache", "stockade.pod.privileged"))
    with pytest.raises(PolicyError, match=r"package data\.stockade\.pod\.privileged is already defined"):
        load_library([rules])
    # the cache holds the bundled library alone
    assert "DEMO-001" not in load_library().rules
