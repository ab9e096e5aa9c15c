package stockade.azure.xlayer_sandbox_pool_test

import data.stockade.azure.xlayer_sandbox_pool as rule
import rego.v1

pool(name, runtime) := {"name": name, "workloadRuntime": runtime, "field": sprintf("properties.agentPoolProfiles[%s]", [name])}

cluster(pools) := {"name": "aks-prod", "nodePools": pools}

pod(class, c, rc) := {
	"object": {"kind": "Pod", "metadata": {"name": "p"}},
	"pod": {"metadata": {}, "spec": {"runtimeClassName": class}, "path": [], "specPath": ["spec"], "metadataPath": ["metadata"]},
	"facts": {"azure": {"cluster": c}, "runtimeClass": rc},
}

no_rc := {"name": null, "known": false, "exists": null, "handler": null}

test_kata_class_without_kata_pool if {
	some v in rule.deny with input as pod("kata-vm-isolation", cluster([pool("sys", "OCIContainer")]), no_rc)
	contains(v.msg, "runtimeClassName kata-vm-isolation is a sandbox, but no node pool of AKS cluster aks-prod")
	contains(v.msg, "sys (properties.agentPoolProfiles[sys].workloadRuntime: OCIContainer)")
	v.path == ["spec", "runtimeClassName"]
}

test_kata_pool_runs_it if {
	c := cluster([pool("sys", "OCIContainer"), pool("kata", "KataVmIsolation")])
	count(rule.deny) == 0 with input as pod("kata-vm-isolation", c, no_rc)
	c2 := cluster([pool("kata", "KataMshvVmIsolation")])
	count(rule.deny) == 0 with input as pod("kata-mshv-vm-isolation", c2, no_rc)
}

test_unknown_runtime_claims_nothing if {
	marker := "[unknown: set by an expression stockade cannot evaluate: parameters('rt'): no value in x]"
	count(rule.deny) == 0 with input as pod("kata-vm-isolation", cluster([pool("p", marker)]), no_rc)
}

test_class_known_by_its_handler if {
	rc := {"name": "secure", "known": true, "exists": true, "handler": "kata-qemu"}
	count(rule.deny) == 1 with input as pod("secure", cluster([pool("sys", "OCIContainer")]), rc)
}

test_ordinary_classes_and_one_layer_say_nothing if {
	count(rule.deny) == 0 with input as pod("runc", cluster([pool("sys", "OCIContainer")]), no_rc)
	inp := json.patch(pod("kata-vm-isolation", cluster([]), no_rc), [{"op": "replace", "path": "/facts/azure", "value": null}])
	count(rule.deny) == 0 with input as inp
}
