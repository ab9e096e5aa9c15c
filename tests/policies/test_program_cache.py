"""The compiled program kept between runs (policies/runtimes/program_cache.py): same verdicts, never stale,
never trusted when damaged, and nothing cached where the package folder is not writable."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

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
    second = load_library()  # every block from the cache
    assert second.rules == first.rules and len(second.rules) > 100
    # the blocks are taken from the cache (by their text's hash): a title planted there shows
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
        assert load_library().rules == expected
        assert cache.read_bytes() not in (b"", b"\x00not marshal") and len(cache.read_bytes()) > 100


def test_no_metadata_cache_where_the_folder_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(program_cache, "FOLDER", blocker / ".compiled")  # under a file: never a folder
    assert len(load_library().rules) > 100
