package stockade.pod.volume_types_test

import data.stockade.pod.volume_types
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := volume_types.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

test_allowed_types if {
	spec := {"volumes": [
		{"name": "cm", "configMap": {"name": "c"}},
		{"name": "csi", "csi": {"driver": "file.csi.azure.com"}},
		{"name": "dapi", "downwardAPI": {"items": []}},
		{"name": "tmp", "emptyDir": {}},
		{"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
		{"name": "img", "image": {"reference": "registry.example/model:v1"}},
		{"name": "pvc", "persistentVolumeClaim": {"claimName": "data"}},
		{"name": "proj", "projected": {"sources": []}},
		{"name": "sec", "secret": {"secretName": "s"}},
	]}
	paths(pod(spec)) == set()
}

# The API server defaults a volume without a source to emptyDir.
test_volume_without_source_allowed if {
	paths(pod({"volumes": [{"name": "scratch"}, {"name": "nulled", "nfs": null}]})) == set()
}

test_restricted_types_denied if {
	spec := {"volumes": [
		{"name": "a", "emptyDir": {}},
		{"name": "b", "hostPath": {"path": "/"}},
		{"name": "c", "nfs": {"server": "s", "path": "/"}},
		{"name": "d", "gitRepo": {"repository": "r"}},
		{"name": "e", "cephfs": {"monitors": []}},
		{"name": "f", "awsElasticBlockStore": {"volumeID": "v"}},
	]}
	paths(pod(spec)) == {
		["spec", "volumes", 2, "nfs"],
		["spec", "volumes", 3, "gitRepo"],
		["spec", "volumes", 4, "cephfs"],
		["spec", "volumes", 5, "awsElasticBlockStore"],
	}
}

test_unknown_type_denied if {
	some v in deny(pod({"volumes": [{"name": "x", "futureVolume": {}}]}))
	v.path == ["spec", "volumes", 0, "futureVolume"]
	v.details.type == "futureVolume"
	contains(v.msg, `"x"`)
}

test_baseline_namespace_allowed if {
	paths(at_level({"volumes": [{"name": "c", "nfs": {"server": "s", "path": "/"}}]}, "baseline")) == set()
}

test_template_path_prefixed if {
	inp := {"pod": {"spec": {"volumes": [{"name": "c", "iscsi": {}}]}, "metadata": {}, "path": ["spec", "template"]}, "namespace": {}}
	paths(inp) == {["spec", "template", "spec", "volumes", 0, "iscsi"]}
}

# issue 37: a hostPath volume is one finding, STK-POD-005's (which runs at restricted too)
test_host_path_left_to_host_path_rule if {
	paths(pod({"volumes": [{"name": "tz", "hostPath": {"path": "/etc/localtime"}}]})) == set()
}
