package stockade.serviceaccount.legacy_token_secret_test

import data.stockade.serviceaccount.legacy_token_secret
import rego.v1

secret(type, labels) := {"object": {
	"kind": "Secret",
	"type": type,
	"metadata": {"name": "build-robot-token", "labels": labels, "annotations": {"kubernetes.io/service-account.name": "build-robot"}},
	"data": {"token": "c2VjcmV0"},
}}

test_legacy_token_secret_denied if {
	vs := legacy_token_secret.deny with input as secret("kubernetes.io/service-account-token", {})
	some v in vs
	v.path == ["type"]
	v.details.serviceAccount == "build-robot"
	not contains(v.msg, "c2VjcmV0")
}

test_other_types_allowed if {
	d1 := legacy_token_secret.deny with input as secret("Opaque", {})
	count(d1) == 0
	d2 := legacy_token_secret.deny with input as secret("kubernetes.io/tls", {})
	count(d2) == 0
}

test_invalidated_token_allowed if {
	d := legacy_token_secret.deny with input as secret("kubernetes.io/service-account-token", {"kubernetes.io/legacy-token-invalid-since": "2026-01-01"})
	count(d) == 0
}
