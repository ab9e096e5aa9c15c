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
	{v.path | some v in invalid_reference.deny with input as inp} == {
		["spec", "initContainers", 0, "image"],
		["spec", "volumes", 0, "image", "reference"],
	}
}

test_empty_image_not_reported if {
	not_reported("")
}
