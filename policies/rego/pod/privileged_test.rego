package stockade.pod.privileged_test

import data.stockade.pod.privileged
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

test_unset_allowed if {
	count(privileged.deny) == 0 with input as pod({"containers": [{"name": "a"}]}) with data.stockade.config as cfg
}

test_false_allowed if {
	count(privileged.deny) == 0 with input as pod({"containers": [{"name": "a", "securityContext": {"privileged": false}}]})
		with data.stockade.config as cfg
}

test_privileged_init_container_denied if {
	some v in privileged.deny with input as pod({"initContainers": [{"name": "i", "securityContext": {"privileged": true}}]})
		with data.stockade.config as cfg
	v.path == ["spec", "initContainers", 0, "securityContext", "privileged"]
}

test_privileged_namespace_allows if {
	inp := object.union(pod({"containers": [{"name": "a", "securityContext": {"privileged": true}}]}), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": "privileged"}}})
	count(privileged.deny) == 0 with input as inp with data.stockade.config as cfg
}

test_template_path_prefixed if {
	inp := {"pod": {"spec": {"containers": [{"name": "a", "securityContext": {"privileged": true}}]}, "metadata": {}, "path": ["spec", "template"]}, "namespace": {}}
	some v in privileged.deny with input as inp with data.stockade.config as cfg
	v.path == ["spec", "template", "spec", "containers", 0, "securityContext", "privileged"]
}

test_unnamed_container_still_reported if {
	count(privileged.deny) == 1 with input as pod({"containers": [{"securityContext": {"privileged": true}}]})
		with data.stockade.config as cfg
}

test_invalid_level_label_counts_as_restricted if {
	inp := object.union(pod({"containers": [{"name": "a", "securityContext": {"privileged": true}}]}), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": "bogus"}}})
	count(privileged.deny) == 1 with input as inp with data.stockade.config as {"pss": {"default_level": "privileged"}}
}
