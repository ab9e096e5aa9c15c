package stockade.runtime.sandbox_handler_test

import data.stockade.runtime.fixtures_test as f
import data.stockade.runtime.sandbox_handler
import rego.v1

paths(inp) := {v.path | some v in sandbox_handler.deny with input as inp}

pinned := {"nodeSelector": {"pool": "sandbox"}}

test_gvisor_named_class_with_runc_denied if {
	some v in sandbox_handler.deny with input as f.runtime_class("gvisor", "runc", pinned, null)
	v.path == ["handler"]
	contains(v.msg, "handler \"runc\" is not a sandbox handler of the baremetal profile")
}

test_gvisor_with_runsc_allowed if {
	paths(f.runtime_class("gvisor", "runsc", pinned, null)) == set()
}

test_kata_variants_allowed if {
	paths(f.runtime_class("kata-qemu", "kata-qemu", pinned, null)) == set()
	paths(f.runtime_class("kata-fc", "kata-fc", pinned, null)) == set()
}

test_ordinary_class_with_runc_allowed if {
	paths(f.runtime_class("nvidia", "nvidia", pinned, null)) == set()
}

test_missing_handler_denied if {
	inp := f.runtime_class("sandboxed", null, pinned, null)
	some v in sandbox_handler.deny with input as inp
	contains(v.msg, "handler unset")
}

test_runsc_is_not_a_sandbox_on_aks if {
	paths(f.runtime_class("gvisor", "runsc", pinned, "aks-1")) == {["handler"]} with data.stockade.config.sandbox.clusters as f.aks_clusters
}

test_aks_kata_allowed if {
	paths(f.runtime_class("kata-vm-isolation", "kata", pinned, "aks-1")) == set() with data.stockade.config.sandbox.clusters as f.aks_clusters
}

test_approved_name_counts_as_a_claim if {
	paths(f.runtime_class("secure", "runc", pinned, null)) == {["handler"]} with data.stockade.config.sandbox.baremetal.classes as ["secure"]
}

test_workload_in_fake_sandbox_denied if {
	inp := f.pod(f.spec({"runtimeClassName": "gvisor"}), f.ns_sandbox, f.rc("gvisor", "runc", {}))
	some v in sandbox_handler.deny with input as inp
	v.path == ["spec", "runtimeClassName"]
	contains(v.msg, "share the host kernel")
}

test_workload_with_unknown_class_allowed if {
	paths(f.pod(f.spec({"runtimeClassName": "gvisor"}), f.ns_sandbox, f.rc_unknown("gvisor"))) == set()
}

test_workload_in_real_sandbox_allowed if {
	paths(f.pod(f.spec({"runtimeClassName": "gvisor"}), f.ns_sandbox, f.rc("gvisor", "runsc", {}))) == set()
}
