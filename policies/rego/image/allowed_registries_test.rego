package stockade.image.allowed_registries_test

import data.stockade.image.allowed_registries
import rego.v1

cfg(registries) := {"images": {"allowed_registries": registries, "require_digest_namespaces": []}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "object": {}, "namespace": {}}

images(list) := pod({"containers": [{"name": sprintf("c%d", [i]), "image": img} | some i, img in list]})

paths(inp, registries) := {v.path | some v in allowed_registries.deny with input as inp with data.stockade.config as cfg(registries)}

test_prefix_match_allowed if {
	paths(images(["myacr.azurecr.io/team/x:1", "myacr.azurecr.io/y@sha256:aaaa"]), ["myacr.azurecr.io/"]) == set()
}

test_entry_without_trailing_slash_allowed if {
	paths(images(["myacr.azurecr.io/team/x:1"]), ["myacr.azurecr.io"]) == set()
}

test_lookalike_host_denied if {
	paths(images(["myacr.azurecr.io.evil.com/team/x:1"]), ["myacr.azurecr.io/"]) == {["spec", "containers", 0, "image"]}
}

test_lookalike_path_denied if {
	paths(images(["mcr.microsoft.com/ossx/app:1"]), ["mcr.microsoft.com/oss/"]) == {["spec", "containers", 0, "image"]}
}

test_path_prefix_allowed if {
	paths(images(["mcr.microsoft.com/oss/app:1"]), ["mcr.microsoft.com/oss/"]) == set()
}

test_full_repository_entry_allowed if {
	paths(images(["mcr.microsoft.com/oss/app:1"]), ["mcr.microsoft.com/oss/app"]) == set()
	paths(images(["mcr.microsoft.com/oss/app-other:1"]), ["mcr.microsoft.com/oss/app"]) == {["spec", "containers", 0, "image"]}
}

test_port_is_part_of_host if {
	paths(images(["gcr.io:5000/project/image:1.0"]), ["gcr.io/"]) == {["spec", "containers", 0, "image"]}
	paths(images(["reg.local:5000/app"]), ["reg.local:5000/"]) == set()
}

test_docker_hub_short_names_normalised if {
	paths(images(["nginx", "nginx:1.25", "user/app:1"]), ["docker.io/"]) == set()
	paths(images(["nginx:1.25"]), ["docker.io/library/"]) == set()
	paths(images(["user/app:1"]), ["docker.io/library/"]) == {["spec", "containers", 0, "image"]}
	paths(images(["index.docker.io/library/nginx:1"]), ["docker.io/library/"]) == set()
	paths(images(["docker.io/nginx:1"]), ["index.docker.io/library/"]) == set()
}

test_registry_host_case_insensitive if {
	paths(images(["MyACR.azurecr.io/x:1"]), ["myacr.azurecr.io/"]) == set()
	paths(images(["myacr.azurecr.io/x:1"]), ["MYACR.azurecr.io/"]) == set()
}

test_localhost_registry if {
	paths(images(["localhost/app:1"]), ["localhost/"]) == set()
	paths(images(["localhost/app:1"]), ["docker.io/"]) == {["spec", "containers", 0, "image"]}
}

test_no_allowlist_checks_nothing if {
	inp := images(["myacr.azurecr.io/x:1", "nginx", "evil.io/x:latest"])
	empty := allowed_registries.deny with input as inp with data.stockade.config as cfg([])
	count(empty) == 0
	absent := allowed_registries.deny with input as inp with data.stockade.config as {"images": {}}
	count(absent) == 0
}

test_message_names_container_and_image if {
	some v in allowed_registries.deny with input as images(["evil.io/x:1"]) with data.stockade.config as cfg(["good.io/"])
	v.msg == "container \"c0\" image \"evil.io/x:1\" (evil.io/x) is not from an allowed registry (allowed: good.io/)"
}

test_init_ephemeral_and_image_volumes_checked if {
	inp := pod({
		"initContainers": [{"name": "i", "image": "evil.io/i:1"}],
		"containers": [{"name": "c", "image": "good.io/c:1"}],
		"ephemeralContainers": [{"name": "e", "image": "evil.io/e:1"}],
		"volumes": [{"name": "models", "image": {"reference": "evil.io/models:1"}}, {"name": "ok", "image": {"reference": "good.io/m:1"}}],
	})
	paths(inp, ["good.io/"]) == {
		["spec", "initContainers", 0, "image"],
		["spec", "ephemeralContainers", 0, "image"],
		["spec", "volumes", 0, "image", "reference"],
	}
}

test_template_path_prefixed if {
	inp := {"pod": {"spec": {"containers": [{"name": "c", "image": "evil.io/c:1"}]}, "metadata": {}, "path": ["spec", "template"]}}
	paths(inp, ["good.io/"]) == {["spec", "template", "spec", "containers", 0, "image"]}
}

test_missing_image_ignored if {
	paths(pod({"containers": [{"name": "c"}, {"name": "d", "image": ""}, {"name": "e", "image": 3}]}), ["good.io/"]) == set()
}
