package stockade.pod.probe_host_test

import data.stockade.pod.probe_host
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := probe_host.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

http(host) := {"httpGet": {"host": host, "port": 8080, "path": "/healthz"}}

tcp(host) := {"tcpSocket": {"host": host, "port": 8080}}

test_no_host_allowed if {
	c := {
		"name": "a",
		"livenessProbe": {"httpGet": {"port": 8080, "path": "/healthz", "httpHeaders": [{"name": "Host", "value": "example.com"}]}},
		"readinessProbe": {"tcpSocket": {"port": 8080}},
		"startupProbe": {"exec": {"command": ["true"]}},
		"lifecycle": {"postStart": {"exec": {"command": ["true"]}}, "preStop": {"sleep": {"seconds": 1}}},
	}
	paths(at_level({"containers": [c]}, "baseline")) == set()
}

test_empty_host_allowed if {
	paths(pod({"containers": [{"name": "a", "livenessProbe": http(""), "readinessProbe": tcp(""), "lifecycle": {"preStop": http("")}}]})) == set()
}

test_every_probe_and_handler_denied if {
	c := {
		"name": "a",
		"livenessProbe": http("10.0.0.1"),
		"readinessProbe": tcp("10.0.0.2"),
		"startupProbe": http("metadata.internal"),
		"lifecycle": {"postStart": http("169.254.169.254"), "preStop": tcp("10.0.0.3")},
	}
	paths(pod({"containers": [c]})) == {
		["spec", "containers", 0, "livenessProbe", "httpGet", "host"],
		["spec", "containers", 0, "readinessProbe", "tcpSocket", "host"],
		["spec", "containers", 0, "startupProbe", "httpGet", "host"],
		["spec", "containers", 0, "lifecycle", "postStart", "httpGet", "host"],
		["spec", "containers", 0, "lifecycle", "preStop", "tcpSocket", "host"],
	}
}

# No address is exempt, loopback included (the kubelet resolves it on the node).
test_localhost_denied if {
	some v in deny(pod({"containers": [{"name": "a", "livenessProbe": http("127.0.0.1")}]}))
	v.details.host == "127.0.0.1"
	contains(v.msg, `"a"`)
}

test_init_and_ephemeral_containers_denied if {
	spec := {
		"initContainers": [{"name": "i", "restartPolicy": "Always", "startupProbe": tcp("::1")}],
		"containers": [{"name": "a"}],
		"ephemeralContainers": [{"name": "e", "lifecycle": {"postStart": http("node")}}],
	}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "startupProbe", "tcpSocket", "host"],
		["spec", "ephemeralContainers", 0, "lifecycle", "postStart", "httpGet", "host"],
	}
}

test_privileged_namespace_allowed if {
	paths(at_level({"containers": [{"name": "a", "livenessProbe": http("10.0.0.1")}]}, "privileged")) == set()
}
