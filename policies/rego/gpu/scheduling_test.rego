package stockade.gpu.scheduling_test

import data.stockade.gpu.scheduling
import rego.v1

toleration := {"key": "nvidia.com/gpu", "operator": "Exists", "value": null, "effect": "NoSchedule"}

cfg(tolerations, selector) := {"gpu": {"resources": ["nvidia.com/gpu"], "tolerations": tolerations, "node_selector": selector}}

default_cfg := cfg([toleration], {})

gpu(extra) := object.union({"containers": [{"name": "t", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}, extra)

inp(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}}

paths(spec, c) := {v.path | some v in scheduling.deny with input as inp(spec) with data.stockade.config as c}

tolerates(t) if paths(gpu({"tolerations": [t]}), default_cfg) == set()

rejects(t) if paths(gpu({"tolerations": [t]}), default_cfg) == {["spec", "tolerations"]}

test_matching_toleration_allowed if {
	tolerates({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
}

test_missing_toleration_denied if {
	paths(gpu({}), default_cfg) == {["spec", "tolerations"]}
	some v in scheduling.deny with input as inp(gpu({})) with data.stockade.config as default_cfg
	v.msg == "pod uses GPUs (container \"t\": nvidia.com/gpu) but tolerates none of the GPU node taints nvidia.com/gpu:NoSchedule"
}

test_empty_effect_tolerates_all_effects if {
	tolerates({"key": "nvidia.com/gpu", "operator": "Exists"})
}

test_other_effect_rejected if {
	rejects({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"})
}

test_empty_key_exists_tolerates_everything if {
	tolerates({"operator": "Exists"})
}

test_empty_key_equal_is_not_a_wildcard if {
	rejects({"operator": "Equal", "value": ""})
}

test_other_key_rejected if {
	rejects({"key": "sku", "operator": "Exists", "effect": "NoSchedule"})
}

test_equal_any_value_when_configured_exists if {
	tolerates({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"})
	tolerates({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
}

test_configured_equal_needs_same_value if {
	c := cfg([{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}], {})
	paths(gpu({"tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}), c) == set()
	paths(gpu({"tolerations": [{"key": "sku", "value": "gpu"}]}), c) == set()
	paths(gpu({"tolerations": [{"key": "sku", "operator": "Exists"}]}), c) == set()
	paths(gpu({"tolerations": [{"key": "sku", "operator": "Equal", "value": "cpu", "effect": "NoSchedule"}]}), c) == {["spec", "tolerations"]}
}

test_configured_without_effect_accepts_any_effect if {
	c := cfg([{"key": "sku", "operator": "Equal", "value": "gpu", "effect": null}], {})
	paths(gpu({"tolerations": [{"key": "sku", "value": "gpu", "effect": "NoExecute"}]}), c) == set()
}

test_unknown_operator_rejected if {
	rejects({"key": "nvidia.com/gpu", "operator": "Lt", "value": "5", "effect": "NoSchedule"})
}

test_one_of_several_configured_tolerations if {
	c := cfg([toleration, {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}], {})
	paths(gpu({"tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}), c) == set()
}

test_no_configured_tolerations_no_requirement if {
	paths(gpu({}), cfg([], {})) == set()
}

test_non_gpu_pod_allowed if {
	paths({"containers": [{"name": "a"}]}, cfg([toleration], {"pool": "gpu"})) == set()
	paths({"containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": 0}}}]}, default_cfg) == set()
}

test_malformed_toleration_ignored if {
	rejects("nvidia.com/gpu")
}

ok_tolerations := {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}

selector_cfg := cfg([toleration], {"pool": "gpu", "accelerator": "h100"})

test_node_selector_allowed if {
	paths(gpu(object.union(ok_tolerations, {"nodeSelector": {"pool": "gpu", "accelerator": "h100", "zone": "a"}})), selector_cfg) == set()
}

test_node_selector_missing_label_denied if {
	spec := gpu(object.union(ok_tolerations, {"nodeSelector": {"pool": "gpu", "accelerator": "a100"}}))
	paths(spec, selector_cfg) == {["spec", "nodeSelector", "accelerator"]}
	some v in scheduling.deny with input as inp(spec) with data.stockade.config as selector_cfg
	contains(v.msg, "does not select node label accelerator=h100")
}

test_node_selector_absent_denied_per_label if {
	paths(gpu(ok_tolerations), selector_cfg) == {["spec", "nodeSelector", "pool"], ["spec", "nodeSelector", "accelerator"]}
}

affinity(terms) := {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}

term(exprs) := {"matchExpressions": exprs}

test_required_affinity_selects if {
	terms := [term([
		{"key": "pool", "operator": "In", "values": ["gpu", "gpu-spot"]},
		{"key": "accelerator", "operator": "In", "values": ["h100"]},
	])]
	paths(gpu(object.union(ok_tolerations, affinity(terms))), selector_cfg) == set()
}

test_affinity_and_node_selector_combine if {
	spec := gpu(object.union(ok_tolerations, object.union({"nodeSelector": {"pool": "gpu"}}, affinity([term([{"key": "accelerator", "operator": "In", "values": ["h100"]}])]))))
	paths(spec, selector_cfg) == set()
}

test_every_affinity_term_must_select if {
	terms := [
		term([{"key": "pool", "operator": "In", "values": ["gpu"]}, {"key": "accelerator", "operator": "In", "values": ["h100"]}]),
		term([{"key": "pool", "operator": "In", "values": ["cpu"]}]),
	]
	paths(gpu(object.union(ok_tolerations, affinity(terms))), selector_cfg) == {["spec", "nodeSelector", "pool"], ["spec", "nodeSelector", "accelerator"]}
}

test_affinity_other_operators_do_not_select if {
	terms := [term([{"key": "pool", "operator": "NotIn", "values": ["gpu"]}, {"key": "accelerator", "operator": "Exists"}])]
	paths(gpu(object.union(ok_tolerations, affinity(terms))), selector_cfg) == {["spec", "nodeSelector", "pool"], ["spec", "nodeSelector", "accelerator"]}
}

test_preferred_affinity_does_not_select if {
	spec := gpu(object.union(ok_tolerations, {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": term([{"key": "pool", "operator": "In", "values": ["gpu"]}])}]}}}))
	paths(spec, cfg([toleration], {"pool": "gpu"})) == {["spec", "nodeSelector", "pool"]}
}

test_empty_term_list_does_not_select if {
	paths(gpu(object.union(ok_tolerations, affinity([]))), cfg([toleration], {"pool": "gpu"})) == {["spec", "nodeSelector", "pool"]}
}
