package stockade.pod.read_only_root_filesystem_test

import data.stockade.pod.read_only_root_filesystem
import rego.v1

inp(spec) := {"object": {"kind": "Pod"}, "pod": {"spec": spec, "metadata": {}, "path": []}}

deny(spec) := d if {
	d := read_only_root_filesystem.deny with input as inp(spec)
}

test_unset_and_false_denied if {
	vs := deny({"containers": [{"name": "a"}, {"name": "b", "securityContext": {"readOnlyRootFilesystem": false}}]})
	count(vs) == 2
	some v in vs
	v.path == ["spec", "containers", 1, "securityContext", "readOnlyRootFilesystem"]
	v.msg == "container \"b\" must set securityContext.readOnlyRootFilesystem=true (it is false)"
}

test_init_and_ephemeral_containers_checked if {
	ro := {"readOnlyRootFilesystem": true}
	vs := deny({"containers": [{"name": "a", "securityContext": ro}], "initContainers": [{"name": "i"}], "ephemeralContainers": [{"name": "debug"}]})
	{v.path[1] | some v in vs} == {"initContainers", "ephemeralContainers"}
}

test_read_only_allowed if {
	count(deny({"containers": [{"name": "a", "securityContext": {"readOnlyRootFilesystem": true}}]})) == 0
}

test_string_true_is_not_true if {
	# the decoder gives booleans as Kubernetes decodes them; a string is not a boolean
	count(deny({"containers": [{"name": "a", "securityContext": {"readOnlyRootFilesystem": "true"}}]})) == 1
}

test_windows_exempt if {
	count(deny({"os": {"name": "windows"}, "containers": [{"name": "a"}]})) == 0
}
