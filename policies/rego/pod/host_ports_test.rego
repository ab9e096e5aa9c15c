package stockade.pod.host_ports_test

import data.stockade.pod.host_ports
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := host_ports.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

test_no_host_port_allowed if {
	paths(pod({"containers": [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 0}]}]})) == set()
}

test_host_port_denied if {
	some v in deny(pod({"containers": [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 8080, "hostPort": 8080}]}]}))
	v.path == ["spec", "containers", 0, "ports", 1, "hostPort"]
	v.details.hostPort == 8080
	contains(v.msg, "8080")
}

test_every_container_list_denied if {
	spec := {
		"initContainers": [{"name": "i", "ports": [{"containerPort": 1, "hostPort": 5555}]}],
		"containers": [{"name": "a", "ports": [{"containerPort": 1, "hostPort": 1}, {"containerPort": 2, "hostPort": 2}]}],
		"ephemeralContainers": [{"name": "e", "ports": [{"containerPort": 1, "hostPort": 65535}]}],
	}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "ports", 0, "hostPort"],
		["spec", "containers", 0, "ports", 0, "hostPort"],
		["spec", "containers", 0, "ports", 1, "hostPort"],
		["spec", "ephemeralContainers", 0, "ports", 0, "hostPort"],
	}
}

# PSA has no allowed range: any non-zero hostPort is denied (Kyverno's 5000-6000 variant differs).
test_no_port_range_exception if {
	count(paths(at_level({"containers": [{"name": "a", "ports": [{"containerPort": 1, "hostPort": 5555}]}]}, "baseline"))) == 1
}

test_privileged_namespace_allowed if {
	paths(at_level({"containers": [{"name": "a", "ports": [{"containerPort": 1, "hostPort": 80}]}]}, "privileged")) == set()
}

test_host_network_pod_port_is_defaulted_to_host_port if {
	inp := {
		"pod": {"spec": {"hostNetwork": true, "containers": [{"name": "a", "ports": [{"containerPort": 8000}]}]}, "metadata": {}, "path": []},
		"namespace": {"labels": {}},
	}
	some v in host_ports.deny with input as inp with data.stockade.config as {"pss": {"default_level": "baseline"}}
	v.details == {"hostPort": 8000, "defaulted": true}
	v.path == ["spec", "containers", 0, "ports", 0]
}

test_host_network_template_is_not_defaulted if {
	inp := {
		"pod": {"spec": {"hostNetwork": true, "containers": [{"name": "a", "ports": [{"containerPort": 8000}]}]}, "metadata": {}, "path": ["spec", "template"]},
		"namespace": {"labels": {}},
	}
	count(host_ports.deny) == 0 with input as inp with data.stockade.config as {"pss": {"default_level": "baseline"}}
}

test_host_network_pod_ephemeral_ports_not_defaulted if {
	inp := {
		"pod": {"spec": {"hostNetwork": true, "ephemeralContainers": [{"name": "d", "ports": [{"containerPort": 8000}]}]}, "metadata": {}, "path": []},
		"namespace": {"labels": {}},
	}
	count(host_ports.deny) == 0 with input as inp with data.stockade.config as {"pss": {"default_level": "baseline"}}
}
