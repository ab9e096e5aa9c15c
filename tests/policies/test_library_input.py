"""What the bundled library is given: its input without the fields no bundled rule reads
(``policies/engines/library.py``: ``UNREAD_INPUT``, the object's ``status``, ``managedFields``, and
of a workload's object all but ``WORKLOAD_OBJECT``: its pod spec is ``input.pod``).

Three things hold it: no bundled module names those fields; every input of the differential tests,
given an UPDATE's ``oldObject``, a ``userInfo``, a ``status`` and ``managedFields``, is judged the same
from the lean text (the compiled VM, what every gate runs) as from the whole one (the interpreter);
and a policy directory's rule still reads them, in a scan's engine and in the webhook's engine
process (a real child process).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import orjson

from stockade.policies.config.settings import Config
from stockade.policies.engines.base import evaluate_inputs
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import (
    UNREAD_INPUT,
    UNREAD_METADATA,
    UNREAD_OBJECT,
    library_input,
    load_library,
)
from stockade.policies.engines.process import ProcessEngine
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.model import Resource
from tests.policies.test_engine import write_rule
from tests.policies.test_vm_differential import canonical, generated

MANAGED = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]


def _whole(obj: dict[str, Any]) -> dict[str, Any]:
    md = {**obj.get("metadata", {}), "managedFields": MANAGED}
    return {**obj, "metadata": md, "status": {"phase": "Running", "conditions": [{"type": "Ready"}]}}


def test_no_bundled_module_reads_what_is_left_out() -> None:
    names = [*UNREAD_INPUT, *UNREAD_METADATA, *UNREAD_OBJECT]
    # a field access or a key written as a string: `.status`, `"status"`, `input.operation`, ...
    pattern = re.compile(r"(\.|\")(" + "|".join(names) + r")(\"|\b)")
    for module in load_library().policy_modules:
        code = "\n".join(line.split("#", 1)[0] for line in module.text.splitlines())
        assert not pattern.search(code), (module.path, pattern.search(code))


def test_the_lean_input_drops_only_those_fields_and_copies_nothing_else() -> None:
    obj = _whole({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}})
    pod = {"spec": obj["spec"], "metadata": obj["metadata"], "path": []}
    inp = {"object": obj, "pod": pod, "oldObject": obj, "userInfo": {"username": "u"}, "operation": "UPDATE"}
    inp["facts"] = {"x": 1}
    lean = library_input(inp)
    assert set(lean) == {"object", "pod", "facts"}
    # a workload's object: only what the library reads besides input.pod (the pod spec once)
    assert lean["object"] == {"kind": "Pod", "metadata": {"name": "p"}}
    assert lean["pod"]["metadata"] == {"name": "p"} and lean["pod"]["spec"] is obj["spec"]
    assert lean["facts"] is inp["facts"]
    assert "managedFields" in inp["object"]["metadata"] and "status" in inp["object"]  # not changed
    assert "spec" in inp["object"]
    plain = {"object": {"kind": "Pod", "metadata": {"name": "p"}}, "pod": {"metadata": {}}, "facts": {}}
    assert library_input(plain) is plain
    # any other object keeps everything but status and managedFields (a Service's rules read its spec)
    service = _whole({"kind": "Service", "metadata": {"name": "s"}, "spec": {"type": "LoadBalancer"}})
    lean = library_input({"object": service, "facts": {}})
    assert lean["object"] == {"kind": "Service", "metadata": {"name": "s"}, "spec": {"type": "LoadBalancer"}}
    kept = {"object": {"kind": "Service", "metadata": {}, "spec": {}}, "facts": {}}
    assert library_input(kept) is kept


def test_every_differential_input_is_judged_alike_without_what_is_left_out() -> None:
    ev = Evaluator.default()
    engine = ev.engine
    assert isinstance(engine, EmbeddedEngine) and engine.uses_vm
    compared = 0
    for obj, level in itertools.product(generated(), ["baseline", "restricted"]):
        ns = namespace_info({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": level}}}, "n")
        whole = Resource(_whole(obj))
        rules = engine.rules_for(whole.kind)
        if not rules:
            continue
        inp = ev.build_input(
            whole, namespace=ns, old_object=whole.obj, user_info={"username": "system:admin", "groups": []}
        )
        kind = whole.kind if whole.kind in engine.kinds() else "*"
        lean = engine.evaluate(whole.kind, inp)  # the compiled VM, given library_input(inp)
        interpreted = engine.evaluate_interpreted(kind, rules, orjson.dumps(inp).decode())
        assert canonical(lean) == canonical(interpreted), obj.get("metadata")
        compared += 1
    assert compared >= len(generated())


CUSTOM = (
    'input.userInfo.username == "mallory"\n'
    "\tinput.oldObject.metadata.labels.team != input.object.metadata.labels.team"
)


def test_the_webhook_engine_sends_the_bundled_library_the_lean_input() -> None:
    """What crosses to the engine process, or the event loop's VM (``_message``)."""
    obj = _whole({"kind": "Pod", "metadata": {"name": "p", "namespace": "n"}, "spec": {"containers": []}})
    ev = Evaluator.default(isolated=True)
    engine = ev.engine
    assert isinstance(engine, ProcessEngine)
    try:
        inputs = ev.inputs(Resource(obj), old_object=obj, user_info={"username": "u"})
        message = engine._message(inputs)
        assert message is not None and b'"kind":"Pod"' in message
        for name in (b"oldObject", b"userInfo", b"managedFields", b'"status"', b'"operation"'):
            assert name not in message, name
    finally:
        engine.close()


def test_a_policy_directory_rule_still_reads_them(tmp_path: Path) -> None:
    write_rule(tmp_path, "who", kinds='["ConfigMap"]', body=CUSTOM)
    library = load_library([tmp_path])
    config = Config()
    old = {"kind": "ConfigMap", "metadata": {"name": "c", "labels": {"team": "a"}}}
    new = {"kind": "ConfigMap", "metadata": {"name": "c", "labels": {"team": "b"}, "managedFields": MANAGED}}
    inp = {
        "object": new,
        "oldObject": old,
        "userInfo": {"username": "mallory"},
        "operation": "UPDATE",
        "namespace": {},
        "facts": {},
    }
    scan_engine = EmbeddedEngine(library, config.rule_data())
    assert [v.rule.id for v in scan_engine.evaluate("ConfigMap", inp)] == ["STK-TST-001"]
    webhook_engine = ProcessEngine(library, config, (tmp_path,), 10.0)
    try:
        assert [v.rule.id for v in evaluate_inputs(webhook_engine, [("ConfigMap", inp)])] == ["STK-TST-001"]
    finally:
        webhook_engine.close()
