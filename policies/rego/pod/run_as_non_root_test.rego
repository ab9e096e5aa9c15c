package stockade.pod.run_as_non_root_test

import data.stockade.pod.run_as_non_root
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := run_as_non_root.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

nr(value) := {"runAsNonRoot": value}

test_pod_true_covers_containers if {
	spec := {
		"securityContext": nr(true),
		"initContainers": [{"name": "i"}],
		"containers": [{"name": "a", "securityContext": {}}],
		"ephemeralContainers": [{"name": "e"}],
	}
	paths(pod(spec)) == set()
}

test_every_container_true_allowed if {
	spec := {
		"initContainers": [{"name": "i", "securityContext": nr(true)}],
		"containers": [{"name": "a", "securityContext": nr(true)}],
		"ephemeralContainers": [{"name": "e", "securityContext": nr(true)}],
	}
	paths(pod(spec)) == set()
}

test_unset_everywhere_denied_per_container if {
	spec := {"initContainers": [{"name": "i"}], "containers": [{"name": "a"}, {"name": "b", "securityContext": nr(true)}], "ephemeralContainers": [{"name": "e"}]}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "securityContext", "runAsNonRoot"],
		["spec", "containers", 0, "securityContext", "runAsNonRoot"],
		["spec", "ephemeralContainers", 0, "securityContext", "runAsNonRoot"],
	}
}

test_container_false_overrides_pod_true if {
	spec := {"securityContext": nr(true), "containers": [{"name": "a", "securityContext": nr(false)}, {"name": "b"}]}
	some v in deny(pod(spec))
	v.path == ["spec", "containers", 0, "securityContext", "runAsNonRoot"]
	contains(v.msg, "false")
	count(paths(pod(spec))) == 1
}

test_pod_false_denied_even_when_containers_true if {
	spec := {"securityContext": nr(false), "containers": [{"name": "a", "securityContext": nr(true)}]}
	paths(pod(spec)) == {["spec", "securityContext", "runAsNonRoot"]}
}

test_pod_false_and_container_unset_denied if {
	spec := {"securityContext": nr(false), "containers": [{"name": "a"}]}
	paths(pod(spec)) == {["spec", "securityContext", "runAsNonRoot"], ["spec", "containers", 0, "securityContext", "runAsNonRoot"]}
}

test_null_is_unset if {
	count(paths(pod({"securityContext": nr(null), "containers": [{"name": "a", "securityContext": nr(null)}]}))) == 1
}

test_user_namespace_exempt if {
	spec := {"hostUsers": false, "securityContext": nr(false), "containers": [{"name": "a"}]}
	paths(pod(spec)) == set()
}

test_host_users_true_not_exempt if {
	count(paths(pod({"hostUsers": true, "containers": [{"name": "a"}]}))) == 1
}

test_baseline_namespace_allowed if {
	paths(at_level({"containers": [{"name": "a", "securityContext": nr(false)}]}, "baseline")) == set()
}
