package stockade.image.invalid_reference_test

import data.stockade.image.invalid_reference
import rego.v1

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "object": {}, "namespace": {}}

images(list) := pod({"containers": [{"name": sprintf("c%d", [i]), "image": img} | some i, img in list]})

reported(image) if count(invalid_reference.deny) == 1 with input as images([image])

not_reported(image) if count(invalid_reference.deny) == 0 with input as images([image])

sha256 := "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

# What the reviewed repositories hold (issue 37): operator-filled fields, envsubst and ko templates.
test_placeholders_reported if {
	reported("FILLED BY THE OPERATOR")
	reported("FILLED BY OPERATOR")
	reported("$VLLM_IMAGE")
	reported("${OPT_125M_CACHE_IMAGE}")
	reported("ko://github.com/kserve/kserve/cmd/manager")
	reported("{{ .Values.image.repository }}:{{ .Values.image.tag }}")
	some v in invalid_reference.deny with input as images(["FILLED BY THE OPERATOR"])
	v.msg == "container \"c0\" image \"FILLED BY THE OPERATOR\" is not an image reference (a placeholder?): the image rules did not check it, and the kubelet would refuse it (InvalidImageName)"
	v.path == ["spec", "containers", 0, "image"]
}

test_typos_reported if {
	reported("nginx@sha256:abc")
	reported("registry.example/Team/app:1.0")
	reported("nginx:1.0 ")
	reported("nginx::1.0")
	reported(concat("", ["nginx@", upper(sha256)]))
}

test_references_not_reported if {
	not_reported("nginx")
	not_reported("nginx:latest")
	not_reported("reg:5000/team/app:1.2")
	not_reported(concat("@", ["nginx:1.25", sha256]))
	not_reported("Registry.Example/team/app:1.0")
	not_reported("[::1]:5000/app:v1")
}

test_image_volumes_and_every_container_list if {
	inp := pod({
		"initContainers": [{"name": "i", "image": "$INIT"}],
		"ephemeralContainers": [{"name": "e", "image": "debug:1"}],
		"volumes": [{"name": "m", "image": {"reference": "FILLED BY THE OPERATOR"}}],
	})
	some v in invalid_reference.deny with input as inp
	{f.path | some f in v.details.fields} == {
		["spec", "initContainers", 0, "image"],
		["spec", "volumes", 0, "image", "reference"],
	}
	contains(v.msg, "image volume \"m\"")
}

test_empty_image_not_reported if {
	not_reported("")
}

# One note per pod spec, naming every field (issue 37: 52 notes for gpu-operator's assets).
test_one_note_per_pod_spec if {
	inp := pod({
		"initContainers": [{"name": "toolkit-validation", "image": "FILLED BY THE OPERATOR"}],
		"containers": [
			{"name": "plugin", "image": "FILLED BY THE OPERATOR"},
			{"name": "ok", "image": "nginx:1.25"},
			{"name": "sidecar", "image": "$SIDECAR"},
		],
	})
	notes := invalid_reference.deny with input as inp
	count(notes) == 1
	some v in notes
	v.msg == "3 image fields are not image references (placeholders?): \"$SIDECAR\" in container \"sidecar\"; \"FILLED BY THE OPERATOR\" in container \"plugin\", container \"toolkit-validation\"; the image rules did not check them, and the kubelet would refuse them (InvalidImageName)"
	v.path == ["spec", "containers", 0, "image"]
	[f.path | some f in v.details.fields] == [
		["spec", "containers", 0, "image"],
		["spec", "containers", 2, "image"],
		["spec", "initContainers", 0, "image"],
	]
}

# Argo Workflows substitutes its parameters before it creates the pod: not refused by the kubelet,
# decided when the workflow runs (a plain pod's `{{ }}` is an unrendered template, refused as written).
test_a_workflow_parameter_is_decided_when_it_runs if {
	inp := {"pod": {
		"spec": {"containers": [
			{"name": "main", "image": "{{inputs.parameters.image}}:{{inputs.parameters.tag}}"},
			{"name": "side", "image": "FILLED BY THE OPERATOR"},
		]},
		"metadata": {},
		"path": [],
		"parameters": {"mark": "{{", "text": "an Argo Workflows parameter, set when the workflow runs"},
	}}
	notes := {v.msg | some v in invalid_reference.deny with input as inp}
	notes == {
		"container \"main\" image \"{{inputs.parameters.image}}:{{inputs.parameters.tag}}\": an Argo Workflows parameter, set when the workflow runs: the image rules did not check it",
		"container \"side\" image \"FILLED BY THE OPERATOR\" is not an image reference (a placeholder?): the image rules did not check it, and the kubelet would refuse it (InvalidImageName)",
	}
	reported("{{inputs.parameters.image}}")
}
