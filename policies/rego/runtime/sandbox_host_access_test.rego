package stockade.runtime.sandbox_host_access_test

import data.stockade.runtime.fixtures_test as f
import data.stockade.runtime.sandbox_host_access
import rego.v1

paths(inp) := {v.path | some v in sandbox_host_access.deny with input as inp}

host_spec := {
	"runtimeClassName": "gvisor",
	"hostNetwork": true,
	"hostPID": true,
	"hostIPC": true,
	"initContainers": [{"name": "i", "securityContext": {"privileged": true}}],
	"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 0}]}],
	"ephemeralContainers": [{"name": "e", "securityContext": {"privileged": true}}],
	"volumes": [{"name": "h", "hostPath": {"path": "/var/run"}}, {"name": "e", "emptyDir": {}}],
}

test_every_host_access_denied if {
	paths(f.pod(host_spec, f.ns_plain, f.rc_unknown("gvisor"))) == {
		["spec", "hostNetwork"],
		["spec", "hostPID"],
		["spec", "hostIPC"],
		["spec", "initContainers", 0, "securityContext", "privileged"],
		["spec", "ephemeralContainers", 0, "securityContext", "privileged"],
		["spec", "containers", 0, "ports", 0, "hostPort"],
		["spec", "volumes", 0, "hostPath"],
	}
}

test_high_risk_without_class_denied if {
	some v in sandbox_host_access.deny with input as f.pod(f.spec({"hostNetwork": true}), f.ns_sandbox, f.rc_unknown(null))
	contains(v.msg, "must be sandboxed: namespace label stockade.io/sandbox=required")
	v.details.access == "hostNetwork=true"
}

test_ordinary_pod_with_host_access_allowed if {
	spec := object.remove(host_spec, ["runtimeClassName"])
	paths(f.pod(spec, f.ns_plain, f.rc_unknown(null))) == set()
}

test_class_with_sandbox_handler_counts if {
	spec := object.union(host_spec, {"runtimeClassName": "secure"})
	count(paths(f.pod(spec, f.ns_plain, f.rc("secure", "runsc", {})))) == 7
	paths(f.pod(spec, f.ns_plain, f.rc("secure", "runc", {}))) == set()
}

test_false_values_allowed if {
	spec := f.spec({"runtimeClassName": "gvisor", "hostNetwork": false, "containers": [{"name": "c", "securityContext": {"privileged": false}}]})
	paths(f.pod(spec, f.ns_plain, f.rc_unknown("gvisor"))) == set()
}

test_template_paths if {
	inp := f.deployment(f.spec({"hostPID": true}), f.ns_sandbox, {}, f.rc_unknown(null))
	paths(inp) == {["spec", "template", "spec", "hostPID"]}
}
