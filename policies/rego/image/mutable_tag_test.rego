package stockade.image.mutable_tag_test

import data.stockade.image.mutable_tag
import rego.v1

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "object": {}, "namespace": {}}

images(list) := pod({"containers": [{"name": sprintf("c%d", [i]), "image": img} | some i, img in list]})

denied(image) if {
	count(mutable_tag.deny) == 1 with input as images([image])
}

allowed(image) if {
	count(mutable_tag.deny) == 0 with input as images([image])
}

digest := "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

test_version_tags_allowed if {
	allowed("nginx:1.25")
	allowed("myacr.azurecr.io/team/app:v1.2.3")
	allowed("reg:5000/app:1.0")
	allowed("localhost:5000/app:v2")
}

test_latest_denied if {
	denied("nginx:latest")
	denied("reg:5000/team/app:latest")
	some v in mutable_tag.deny with input as images(["nginx:latest"])
	v.msg == "container \"c0\" image \"nginx:latest\" uses the mutable tag \"latest\""
	v.path == ["spec", "containers", 0, "image"]
}

test_no_tag_denied if {
	denied("nginx")
	denied("myacr.azurecr.io/team/app")
	some v in mutable_tag.deny with input as images(["nginx"])
	contains(v.msg, "has no tag")
}

test_registry_port_is_not_a_tag if {
	denied("reg:5000/app")
	denied("localhost:5000/team/app")
}

test_digest_pins if {
	allowed(concat("@", ["nginx", digest]))
	allowed(concat("@", ["nginx:latest", digest]))
	allowed(concat("@", ["reg:5000/app:1.2", digest]))
	allowed(concat("@", ["reg:5000/app", digest]))
}

test_malformed_digest_pins_nothing if {
	denied("nginx@sha256:abc")
	some v in mutable_tag.deny with input as images(["nginx@sha256:abc"])
	contains(v.msg, "malformed digest \"sha256:abc\"")
	allowed("nginx:1.2@sha256:abc")
}

test_image_volume_checked if {
	inp := pod({"containers": [{"name": "c", "image": "app:1"}], "volumes": [{"name": "m", "image": {"reference": "models"}}]})
	some v in mutable_tag.deny with input as inp
	v.path == ["spec", "volumes", 0, "image", "reference"]
	v.msg == "image volume \"m\" image \"models\" has no tag (it resolves to \"latest\")"
}

test_init_and_ephemeral_checked if {
	inp := pod({"initContainers": [{"name": "i", "image": "a"}], "ephemeralContainers": [{"name": "e", "image": "b:latest"}]})
	{v.path | some v in mutable_tag.deny with input as inp} == {
		["spec", "initContainers", 0, "image"],
		["spec", "ephemeralContainers", 0, "image"],
	}
}

test_floating_tags_denied if {
	denied("localhost:5000/app:dev")
	denied("registry.example/app:Stable")
	some v in mutable_tag.deny with input as images(["registry.example/app:nightly"])
	contains(v.msg, "uses the floating tag \"nightly\" (images.floating_tags)")
	# a digest pins whatever the tag
	allowed(concat("", ["registry.example/app:nightly@", digest]))
}

test_floating_tags_configurable if {
	d := mutable_tag.deny with input as images(["registry.example/app:rolling-2026"]) with data.stockade.config as {"images": {"floating_tags": ["rolling-*"]}}
	count(d) == 1
	e := mutable_tag.deny with input as images(["registry.example/app:nightly"]) with data.stockade.config as {"images": {"floating_tags": []}}
	count(e) == 0
	# an empty list still reports "latest" and no tag
	f := mutable_tag.deny with input as images(["registry.example/app:latest"]) with data.stockade.config as {"images": {"floating_tags": []}}
	count(f) == 1
}
