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

# Text outside the reference grammar is not an image (STK-IMG-005): no tag finding on it.
test_invalid_references_not_judged if {
	allowed("nginx@sha256:abc")
	allowed("nginx:1.2@sha256:abc")
	allowed("FILLED BY THE OPERATOR")
	allowed("$VLLM_IMAGE")
	allowed("${OPT_125M_CACHE_IMAGE}")
	allowed("ko://github.com/kserve/kserve/cmd/manager")
	allowed("{{ .Values.image }}")
	allowed("Registry.Example/Team/App:latest")
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
	# a configured word matches as a word too
	w := mutable_tag.deny with input as images(["registry.example/app:1.2-rc"]) with data.stockade.config as {"images": {"floating_tags": ["rc"]}}
	count(w) == 1
	e := mutable_tag.deny with input as images(["registry.example/app:nightly"]) with data.stockade.config as {"images": {"floating_tags": []}}
	count(e) == 0
	# an empty list still reports "latest" and no tag
	f := mutable_tag.deny with input as images(["registry.example/app:latest"]) with data.stockade.config as {"images": {"floating_tags": []}}
	count(f) == 1
}

# Literal words and globs together, in any case: each decides as it would alone.
test_floating_literals_and_globs_together if {
	cfg := {"images": {"floating_tags": ["Nightly", "rolling-*", "CANARY?"]}}
	a := mutable_tag.deny with input as images(["registry.example/app:NIGHTLY"]) with data.stockade.config as cfg
	count(a) == 1
	b := mutable_tag.deny with input as images(["registry.example/app:1.2-nightly"]) with data.stockade.config as cfg
	count(b) == 1
	c := mutable_tag.deny with input as images(["registry.example/app:Rolling-2026"]) with data.stockade.config as cfg
	count(c) == 1
	d := mutable_tag.deny with input as images(["registry.example/app:canary1"]) with data.stockade.config as cfg
	count(d) == 1
	e := mutable_tag.deny with input as images(["registry.example/app:canary"]) with data.stockade.config as cfg
	count(e) == 0
	f := mutable_tag.deny with input as images(["registry.example/app:rolling"]) with data.stockade.config as cfg
	count(f) == 0
	g := mutable_tag.deny with input as images(["registry.example/app:1.2.3"]) with data.stockade.config as cfg
	count(g) == 0
}

# Floating words inside a tag (issue 37: gpu-operator "main-latest", Ray "nightly-gpu", KServe
# "latest-gpu").
test_floating_words_in_a_tag if {
	denied("nvcr.io/nvidia/gpu-operator:main-latest")
	denied("rayproject/ray:nightly-gpu")
	denied("rayproject/ray:nightly-py310-cu121")
	denied("kserve/huggingfaceserver:latest-gpu")
	denied("registry.example/app:v1.2-latest")
	denied("registry.example/app:stable_alpine")
	denied("registry.example/app:1.0.SNAPSHOT")
	denied("nginx:Stable-Alpine")
	some v in mutable_tag.deny with input as images(["kserve/huggingfaceserver:latest-gpu"])
	v.msg == "container \"c0\" image \"kserve/huggingfaceserver:latest-gpu\" uses the floating tag \"latest-gpu\" (its word \"latest\" is in images.floating_tags)"
}

test_words_are_whole_words if {
	allowed("registry.example/app:latestversion")
	allowed("rayproject/ray:2.9.0-gpu")
	allowed("nginx:mainline")
	allowed("registry.example/app:devel-1.2")
	allowed("registry.example/app:1.2.3-edgy")
}

# Pre-release and support-line words name fixed releases: not floating by default.
test_prerelease_words_not_floating_by_default if {
	allowed("registry.example/app:1.0.0-beta.1")
	allowed("registry.example/app:2.0.0-alpha")
	allowed("jenkins/jenkins:2.440.1-lts-jdk17")
	allowed("registry.example/app:5.0.0-next.3")
	allowed("registry.example/app:1.2.0-rc.1")
}

# A build stamp beside the channel word names one build of the channel.
test_build_stamps_pin_the_channel if {
	allowed("registry.example/app:main-3f2a1b9")
	allowed("registry.example/app:main-3f2a1b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a")
	allowed("registry.example/app:nightly-20240601")
	allowed("registry.example/app:nightly-202406011530")
	allowed("registry.example/app:nightly-2024-06-01")
	allowed("registry.example/app:latest.2024.06.01-gpu")
	# not stamps: a build counter, an all-letter word, an impossible date
	denied("registry.example/app:main-1234")
	denied("registry.example/app:main-deadbeef")
	denied("registry.example/app:nightly-20241301")
	# the whole tag matched by a pattern floats whatever it holds
	d := mutable_tag.deny with input as images(["registry.example/app:rolling-20240601"]) with data.stockade.config as {"images": {"floating_tags": ["rolling-*"]}}
	count(d) == 1
}
