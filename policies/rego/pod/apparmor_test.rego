package stockade.pod.apparmor_test

import data.stockade.pod.apparmor
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := apparmor.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

aa(type) := {"appArmorProfile": {"type": type}}

meta_pod(annotations, spec) := {"pod": {"spec": spec, "metadata": {"annotations": annotations}, "path": []}, "namespace": {"labels": {}}}

test_allowed_types if {
	spec := {
		"securityContext": aa("RuntimeDefault"),
		"initContainers": [{"name": "i", "securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": "p"}}}],
		"containers": [{"name": "a", "securityContext": aa("RuntimeDefault")}, {"name": "b"}],
	}
	paths(pod(spec)) == set()
}

test_pod_unconfined_denied if {
	paths(pod({"securityContext": aa("Unconfined"), "containers": [{"name": "a", "securityContext": aa("RuntimeDefault")}]})) == {["spec", "securityContext", "appArmorProfile", "type"]}
}

test_container_unconfined_denied_despite_valid_pod if {
	spec := {
		"securityContext": aa("RuntimeDefault"),
		"initContainers": [{"name": "i", "securityContext": aa("Unconfined")}],
		"containers": [{"name": "a", "securityContext": aa("Unconfined")}],
		"ephemeralContainers": [{"name": "e", "securityContext": aa("Unconfined")}],
	}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "securityContext", "appArmorProfile", "type"],
		["spec", "containers", 0, "securityContext", "appArmorProfile", "type"],
		["spec", "ephemeralContainers", 0, "securityContext", "appArmorProfile", "type"],
	}
}

test_missing_type_denied if {
	count(paths(pod({"containers": [{"name": "a", "securityContext": {"appArmorProfile": {}}}]}))) == 1
}

test_allowed_annotations if {
	annotations := {
		"container.apparmor.security.beta.kubernetes.io/a": "runtime/default",
		"container.apparmor.security.beta.kubernetes.io/b": "localhost/my-profile",
		"container.apparmor.security.beta.kubernetes.io/c": "",
		"example.com/unrelated": "unconfined",
	}
	paths(meta_pod(annotations, {"containers": [{"name": "a"}]})) == set()
}

test_unconfined_annotation_denied if {
	annotations := {"container.apparmor.security.beta.kubernetes.io/a": "unconfined"}
	some v in deny(meta_pod(annotations, {"containers": [{"name": "a"}]}))
	v.path == ["metadata", "annotations", "container.apparmor.security.beta.kubernetes.io/a"]
	contains(v.msg, "unconfined")
}

test_annotation_path_in_template if {
	inp := {
		"pod": {
			"spec": {"containers": [{"name": "a"}]},
			"metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/a": "unconfined"}},
			"path": ["spec", "template"],
		},
		"namespace": {},
	}
	paths(inp) == {["spec", "template", "metadata", "annotations", "container.apparmor.security.beta.kubernetes.io/a"]}
}

test_baseline_namespace_denied if {
	count(paths(at_level({"securityContext": aa("Unconfined"), "containers": [{"name": "a"}]}, "baseline"))) == 1
}

test_privileged_namespace_allowed if {
	paths(at_level({"securityContext": aa("Unconfined"), "containers": [{"name": "a", "securityContext": aa("Unconfined")}]}, "privileged")) == set()
}
