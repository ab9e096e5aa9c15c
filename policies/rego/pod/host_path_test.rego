package stockade.pod.host_path_test

import data.stockade.pod.host_path
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := host_path.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

test_other_volumes_allowed if {
	spec := {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "nfs": {"server": "s", "path": "/"}}, {"name": "c"}]}
	paths(pod(spec)) == set()
}

test_null_host_path_allowed if {
	paths(pod({"volumes": [{"name": "a", "hostPath": null, "emptyDir": {}}]})) == set()
}

test_host_path_denied if {
	spec := {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "root", "hostPath": {"path": "/", "type": "Directory"}}]}
	some v in deny(pod(spec))
	v.path == ["spec", "volumes", 1, "hostPath"]
	contains(v.msg, `"root"`)
	contains(v.msg, `"/"`)
}

test_one_violation_per_volume if {
	spec := {"volumes": [{"name": "a", "hostPath": {"path": "/a"}}, {"name": "b", "hostPath": {}}]}
	paths(pod(spec)) == {["spec", "volumes", 0, "hostPath"], ["spec", "volumes", 1, "hostPath"]}
}

test_baseline_namespace_denied if {
	count(paths(at_level({"volumes": [{"name": "a", "hostPath": {"path": "/"}}]}, "baseline"))) == 1
}

test_privileged_namespace_allowed if {
	paths(at_level({"volumes": [{"name": "a", "hostPath": {"path": "/"}}]}, "privileged")) == set()
}

test_template_path_prefixed if {
	inp := {"pod": {"spec": {"volumes": [{"name": "a", "hostPath": {"path": "/"}}]}, "metadata": {}, "path": ["spec", "template"]}, "namespace": {}}
	paths(inp) == {["spec", "template", "spec", "volumes", 0, "hostPath"]}
}

# issue 37: the one finding for a hostPath volume names every PSA check that rejects it
test_details_name_the_checks if {
	spec := {"volumes": [{"name": "tz", "hostPath": {"path": "/etc/localtime"}}]}
	some v in deny(pod(spec))
	v.details == {"hostPath": "/etc/localtime", "checks": ["hostPathVolumes", "restrictedVolumes"]}
	some w in deny(at_level(spec, "baseline"))
	w.details.checks == ["hostPathVolumes"]
}
