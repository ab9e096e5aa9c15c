package stockade.egress.host_network_test

import data.stockade.egress.host_network
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec, level) := {
	"pod": {"spec": spec, "metadata": {}, "path": ["spec", "template"]},
	"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}},
}

paths(inp) := {v.path | some v in host_network.deny with input as inp with data.stockade.config as cfg}

test_privileged_namespace_denied if {
	paths(pod({"hostNetwork": true}, "privileged")) == {["spec", "template", "spec", "hostNetwork"]}
}

test_baseline_left_to_pss_rule if {
	paths(pod({"hostNetwork": true}, "baseline")) == set()
}

test_pod_network_allowed if {
	paths(pod({"hostNetwork": false}, "privileged")) == set()
}
