package stockade.serviceaccount.legacy_token_mount_test

import data.stockade.serviceaccount.legacy_token_mount
import rego.v1

inp(tokens) := {
	"object": {"kind": "Deployment", "metadata": {"name": "ci", "namespace": "build"}},
	"pod": {"spec": {}, "metadata": {}, "path": ["spec", "template"]},
	"facts": {"serviceAccount": {"name": "default", "legacyTokens": tokens}},
}

test_read_token_secret_denied if {
	vs := legacy_token_mount.deny with input as inp([{"path": ["volumes", 0, "secret", "secretName"], "secret": "robot-token", "serviceAccount": "build-robot"}])
	some v in vs
	v.path == ["spec", "template", "spec", "volumes", 0, "secret", "secretName"]
	v.msg == "pods read Secret \"robot-token\", a non-expiring token of ServiceAccount \"build-robot\""
}

test_no_token_secrets_allowed if {
	d1 := legacy_token_mount.deny with input as inp([])
	count(d1) == 0
	d2 := legacy_token_mount.deny with input as {"object": {"kind": "Pod"}, "pod": {"spec": {}}}
	count(d2) == 0
}
