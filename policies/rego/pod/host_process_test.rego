package stockade.pod.host_process_test

import data.stockade.pod.host_process
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := host_process.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

hp(value) := {"windowsOptions": {"hostProcess": value}}

test_unset_allowed if {
	paths(pod({"os": {"name": "windows"}, "containers": [{"name": "a", "securityContext": {"windowsOptions": {}}}]})) == set()
}

test_false_allowed if {
	paths(pod({"securityContext": hp(false), "containers": [{"name": "a", "securityContext": hp(false)}]})) == set()
}

test_pod_level_denied if {
	paths(pod({"securityContext": hp(true), "containers": [{"name": "a"}]})) == {["spec", "securityContext", "windowsOptions", "hostProcess"]}
}

test_every_container_list_denied if {
	spec := {
		"initContainers": [{"name": "i", "securityContext": hp(true)}],
		"containers": [{"name": "a"}, {"name": "b", "securityContext": hp(true)}],
		"ephemeralContainers": [{"name": "e", "securityContext": hp(true)}],
	}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "securityContext", "windowsOptions", "hostProcess"],
		["spec", "containers", 1, "securityContext", "windowsOptions", "hostProcess"],
		["spec", "ephemeralContainers", 0, "securityContext", "windowsOptions", "hostProcess"],
	}
}

test_message_names_container if {
	some v in deny(pod({"containers": [{"name": "win", "securityContext": hp(true)}]}))
	contains(v.msg, `"win"`)
}

test_baseline_namespace_denied if {
	count(paths(at_level({"securityContext": hp(true), "containers": [{"name": "a"}]}, "baseline"))) == 1
}

test_privileged_namespace_allowed if {
	paths(at_level({"securityContext": hp(true), "containers": [{"name": "a", "securityContext": hp(true)}]}, "privileged")) == set()
}

test_template_path_prefixed if {
	inp := {"pod": {"spec": {"containers": [{"name": "a", "securityContext": hp(true)}]}, "metadata": {}, "path": ["spec", "template"]}, "namespace": {}}
	paths(inp) == {["spec", "template", "spec", "containers", 0, "securityContext", "windowsOptions", "hostProcess"]}
}
