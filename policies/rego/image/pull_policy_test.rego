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

test_never_denied if {
	denied(c("nginx:1.25", "Never"))
	denied(c(concat("@", ["nginx", sha256]), "Never"))
	some v in pull_policy.deny with input as pod([c("nginx:1.25", "Never")])
	v.path == ["spec", "containers", 0, "imagePullPolicy"]
	contains(v.msg, "pull policy Never")
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

test_version_tag_if_not_present_denied if {
	denied(c("nginx:1.25", "IfNotPresent"))
	some v in pull_policy.deny with input as pod([c("nginx:1.25", "IfNotPresent")])
	not contains(v.msg, "default")
}

test_version_tag_default_if_not_present_denied if {
	denied(unset("nginx:1.25"))
	some v in pull_policy.deny with input as pod([unset("nginx:1.25")])
	contains(v.msg, "the Kubernetes default for a tagged image")
	v.path == ["spec", "containers", 0, "imagePullPolicy"]
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
		{"name": "a", "image": {"reference": "models:1"}},
		{"name": "b", "image": {"reference": "models:1", "pullPolicy": "Always"}},
		{"name": "c", "image": {"reference": "models", "pullPolicy": "Never"}},
	]}, "metadata": {}, "path": []}}
	{v.path | some v in pull_policy.deny with input as inp} == {
		["spec", "volumes", 0, "image", "pullPolicy"],
		["spec", "volumes", 2, "image", "pullPolicy"],
	}
}
