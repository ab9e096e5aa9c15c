package stockade.runtime.class_missing_test

import data.stockade.runtime.class_missing
import data.stockade.runtime.fixtures_test as f
import rego.v1

paths(inp) := {v.path | some v in class_missing.deny with input as inp}

test_missing_class_of_high_risk_workload_denied if {
	some v in class_missing.deny with input as f.pod(f.spec({"runtimeClassName": "gvisor"}), f.ns_sandbox, f.rc_missing("gvisor"))
	v.path == ["spec", "runtimeClassName"]
	contains(v.msg, "RuntimeClass \"gvisor\" does not exist")
}

test_missing_sandbox_class_of_any_workload_denied if {
	paths(f.pod(f.spec({"runtimeClassName": "kata-qemu"}), f.ns_plain, f.rc_missing("kata-qemu"))) == {["spec", "runtimeClassName"]}
}

test_missing_other_class_of_ordinary_workload_allowed if {
	paths(f.pod(f.spec({"runtimeClassName": "nvidia"}), f.ns_plain, f.rc_missing("nvidia"))) == set()
}

test_unknown_class_is_not_missing if {
	paths(f.pod(f.spec({"runtimeClassName": "gvisor"}), f.ns_sandbox, f.rc_unknown("gvisor"))) == set()
}

test_existing_class_allowed if {
	paths(f.pod(f.spec({"runtimeClassName": "gvisor"}), f.ns_sandbox, f.rc("gvisor", "runsc", {"pool": "sandbox"}))) == set()
}

test_without_facts_nothing_is_missing if {
	inp := {"object": {"kind": "Pod"}, "pod": {"spec": f.spec({"runtimeClassName": "gvisor"}), "metadata": {}, "path": []}, "namespace": f.ns_sandbox}
	count(class_missing.deny) == 0 with input as inp
}
