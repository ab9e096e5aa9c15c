package stockade.pod.seccomp_baseline_test

import data.stockade.pod.seccomp_baseline
import rego.v1

# Evaluated at baseline: under restricted, seccompProfile_restricted (STK-POD-105) replaces this check.
cfg := {"pss": {"default_level": "baseline"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := seccomp_baseline.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

sc(type) := {"seccompProfile": {"type": type}}

test_unset_allowed if {
	paths(at_level({"containers": [{"name": "a"}]}, "baseline")) == set()
}

test_allowed_types if {
	spec := {
		"securityContext": sc("RuntimeDefault"),
		"containers": [{"name": "a", "securityContext": {"seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"}}}],
	}
	paths(pod(spec)) == set()
}

test_pod_unconfined_denied if {
	paths(at_level({"securityContext": sc("Unconfined"), "containers": [{"name": "a"}]}, "baseline")) == {["spec", "securityContext", "seccompProfile", "type"]}
}

test_container_unconfined_denied_in_every_list if {
	spec := {
		"securityContext": sc("RuntimeDefault"),
		"initContainers": [{"name": "i", "securityContext": sc("Unconfined")}],
		"containers": [{"name": "a", "securityContext": sc("Unconfined")}],
		"ephemeralContainers": [{"name": "e", "securityContext": sc("Unconfined")}],
	}
	paths(at_level(spec, "baseline")) == {
		["spec", "initContainers", 0, "securityContext", "seccompProfile", "type"],
		["spec", "containers", 0, "securityContext", "seccompProfile", "type"],
		["spec", "ephemeralContainers", 0, "securityContext", "seccompProfile", "type"],
	}
}

test_annotations_ignored if {
	inp := {
		"pod": {
			"spec": {"containers": [{"name": "a"}]},
			"metadata": {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}},
			"path": [],
		},
		"namespace": {"labels": {"pod-security.kubernetes.io/enforce": "baseline"}},
	}
	paths(inp) == set()
}

test_windows_denied_at_baseline if {
	spec := {"os": {"name": "windows"}, "securityContext": sc("Unconfined"), "containers": [{"name": "a"}]}
	count(paths(at_level(spec, "baseline"))) == 1
}

test_windows_exempt_at_restricted if {
	spec := {"os": {"name": "windows"}, "securityContext": sc("Unconfined"), "containers": [{"name": "a"}]}
	paths(at_level(spec, "restricted")) == set()
}

test_replaced_by_the_restricted_check_at_restricted if {
	paths(at_level({"securityContext": sc("Unconfined"), "containers": [{"name": "a"}]}, "restricted")) == set()
}

test_privileged_namespace_allowed if {
	paths(at_level({"securityContext": sc("Unconfined"), "containers": [{"name": "a"}]}, "privileged")) == set()
}
