package stockade.pod.host_namespaces_test

import data.stockade.pod.host_namespaces
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := host_namespaces.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

test_unset_allowed if {
	paths(pod({"containers": [{"name": "a"}]})) == set()
}

test_false_allowed if {
	paths(pod({"hostNetwork": false, "hostPID": false, "hostIPC": false, "containers": [{"name": "a"}]})) == set()
}

test_each_namespace_denied if {
	paths(pod({"hostNetwork": true, "hostPID": true, "hostIPC": true, "containers": [{"name": "a"}]})) == {
		["spec", "hostNetwork"],
		["spec", "hostPID"],
		["spec", "hostIPC"],
	}
}

test_host_ipc_alone_denied if {
	some v in deny(pod({"hostIPC": true, "containers": [{"name": "a"}]}))
	v.path == ["spec", "hostIPC"]
	contains(v.msg, "hostIPC")
}

test_baseline_namespace_denied if {
	paths(at_level({"hostPID": true, "containers": [{"name": "a"}]}, "baseline")) == {["spec", "hostPID"]}
}

test_privileged_namespace_allowed if {
	paths(at_level({"hostNetwork": true, "containers": [{"name": "a"}]}, "privileged")) == set()
}

test_invalid_label_still_enforced if {
	paths(at_level({"hostNetwork": true, "containers": [{"name": "a"}]}, "bogus")) == {["spec", "hostNetwork"]}
}

test_cronjob_template_path_prefixed if {
	inp := {
		"pod": {"spec": {"hostNetwork": true}, "metadata": {}, "path": ["spec", "jobTemplate", "spec", "template"]},
		"namespace": {},
	}
	paths(inp) == {["spec", "jobTemplate", "spec", "template", "spec", "hostNetwork"]}
}
