package stockade.image.pull_policy_test

import data.stockade.image.pull_policy
import rego.v1

pod(containers) := {"pod": {"spec": {"containers": containers}, "metadata": {}, "path": []}, "object": {}, "namespace": {}}

c(image, policy) := {"name": "c", "image": image, "imagePullPolicy": policy}

unset(image) := {"name": "c", "image": image}

sha256 := "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

denied(container) if count(pull_policy.deny) == 1 with input as pod([container])

allowed(container) if count(pull_policy.deny) == 0 with input as pod([container])

test_always_allowed if {
	allowed(c("nginx:1.25", "Always"))
	allowed(c("nginx", "Always"))
}

test_never_on_a_mutable_tag_denied if {
	denied(c("nginx", "Never"))
	denied(c("nginx:latest", "Never"))
	denied(c("registry.example/app:nightly-gpu", "Never"))
	some v in pull_policy.deny with input as pod([c("nginx:latest", "Never")])
	v.path == ["spec", "containers", 0, "imagePullPolicy"]
	v.msg == "container \"c\" image \"nginx:latest\" uses pull policy Never on the mutable tag \"latest\": the node's cached copy runs, whatever the tag names now"
}

# A version tag or a digest does not move: which copy a node runs does not depend on the policy.
test_never_on_a_version_tag_or_digest_allowed if {
	allowed(c("nginx:1.25", "Never"))
	allowed(c(concat("@", ["nginx", sha256]), "Never"))
}

test_mutable_tag_with_if_not_present_denied if {
	denied(c("nginx:latest", "IfNotPresent"))
	denied(c("nginx", "IfNotPresent"))
	denied(c("reg:5000/app", "IfNotPresent"))
}

test_unset_on_mutable_tag_defaults_to_always if {
	allowed(unset("nginx"))
	allowed(unset("nginx:latest"))
	allowed(unset("reg:5000/app"))
	allowed({"name": "c", "image": "nginx", "imagePullPolicy": ""})
	allowed({"name": "c", "image": "nginx", "imagePullPolicy": null})
}

# Issue 37: 234 findings on version-tagged images with the Kubernetes default were noise.
test_version_tag_if_not_present_allowed if {
	allowed(c("nginx:1.25", "IfNotPresent"))
	allowed(unset("nginx:1.25"))
	allowed(unset("nvcr.io/nvidia/gpu-operator:v24.9.0"))
	allowed(unset("rayproject/ray:2.9.0-gpu"))
}

# Kubernetes defaults a floating tag other than "latest" to IfNotPresent: the policy matters there.
test_floating_tag_default_if_not_present_denied if {
	denied(unset("rayproject/ray:nightly"))
	denied(unset("kserve/huggingfaceserver:latest-gpu"))
	denied(c("nvcr.io/nvidia/gpu-operator:main-latest", "IfNotPresent"))
	allowed(c("rayproject/ray:nightly", "Always"))
	some v in pull_policy.deny with input as pod([unset("rayproject/ray:nightly")])
	v.msg == "container \"c\" image \"rayproject/ray:nightly\" uses pull policy IfNotPresent (the Kubernetes default for a tag other than \"latest\") on the floating tag \"nightly\": a node keeps running the copy it pulled first while others pull newer ones"
	v.path == ["spec", "containers", 0, "imagePullPolicy"]
	v.details.set == false
}

test_invalid_reference_not_judged if {
	allowed(c("FILLED BY THE OPERATOR", "IfNotPresent"))
	allowed(unset("$VLLM_IMAGE:nightly"))
	allowed(c("nginx@sha256:abc", "Never"))
}

test_digest_if_not_present_allowed if {
	allowed(c(concat("@", ["nginx", sha256]), "IfNotPresent"))
	allowed(unset(concat("@", ["nginx", sha256])))
	allowed(unset(concat("@", ["nginx:1.25", sha256])))
}

test_latest_with_digest_defaults_to_always if {
	allowed(unset(concat("@", ["nginx:latest", sha256])))
}

test_image_volume_pull_policy if {
	inp := {"pod": {"spec": {"volumes": [
		{"name": "a", "image": {"reference": "models:nightly"}},
		{"name": "b", "image": {"reference": "models:nightly", "pullPolicy": "Always"}},
		{"name": "c", "image": {"reference": "models", "pullPolicy": "Never"}},
		{"name": "d", "image": {"reference": "models:1"}},
	]}, "metadata": {}, "path": []}}
	{v.path | some v in pull_policy.deny with input as inp} == {
		["spec", "volumes", 0, "image", "pullPolicy"],
		["spec", "volumes", 2, "image", "pullPolicy"],
	}
}
