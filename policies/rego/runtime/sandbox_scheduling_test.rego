package stockade.runtime.sandbox_scheduling_test

import data.stockade.runtime.fixtures_test as f
import data.stockade.runtime.sandbox_scheduling
import rego.v1

paths(inp) := {v.path | some v in sandbox_scheduling.deny with input as inp}

test_unpinned_sandbox_class_denied if {
	some v in sandbox_scheduling.deny with input as f.runtime_class("gvisor", "runsc", null, null)
	v.path == ["scheduling", "nodeSelector"]
	contains(v.msg, "a non-empty scheduling.nodeSelector")
}

test_empty_node_selector_denied if {
	paths(f.runtime_class("gvisor", "runsc", {"nodeSelector": {}}, null)) == {["scheduling", "nodeSelector"]}
}

test_pinned_sandbox_class_allowed if {
	paths(f.runtime_class("gvisor", "runsc", {"nodeSelector": {"pool": "sandbox"}}, null)) == set()
}

test_handler_alone_makes_a_sandbox_class if {
	paths(f.runtime_class("isolated", "kata-clh", null, null)) == {["scheduling", "nodeSelector"]}
}

test_ordinary_class_allowed if {
	paths(f.runtime_class("nvidia", "nvidia", null, null)) == set()
}

test_aks_needs_the_kata_pool_label if {
	wrong := f.runtime_class("kata-vm-isolation", "kata", {"nodeSelector": {"agentpool": "x"}}, "aks-1")
	some v in sandbox_scheduling.deny with input as wrong with data.stockade.config.sandbox.clusters as f.aks_clusters
	contains(v.msg, "kubernetes.azure.com/kata-vm-isolation=true or kubernetes.azure.com/kata-mshv-vm-isolation=true")
	right := f.runtime_class("kata-mshv-vm-isolation", "kata", {"nodeSelector": {"kubernetes.azure.com/kata-mshv-vm-isolation": "true"}}, "aks-1")
	paths(right) == set() with data.stockade.config.sandbox.clusters as f.aks_clusters
}

test_configured_pool_needs_every_label if {
	pools := [{"pool": "sandbox", "runtime": "gvisor"}]
	partial := f.runtime_class("gvisor", "runsc", {"nodeSelector": {"pool": "sandbox"}}, null)
	paths(partial) == {["scheduling", "nodeSelector"]} with data.stockade.config.sandbox.baremetal.node_selectors as pools
	full := f.runtime_class("gvisor", "runsc", {"nodeSelector": {"pool": "sandbox", "runtime": "gvisor", "x": "y"}}, null)
	paths(full) == set() with data.stockade.config.sandbox.baremetal.node_selectors as pools
}
