package stockade.image.digest_required_test

import data.stockade.image.digest_required
import rego.v1

cfg(namespaces) := {"images": {"allowed_registries": [], "require_digest_namespaces": namespaces}}

inp(ns, image) := {
	"pod": {"spec": {"containers": [{"name": "c", "image": image}]}, "metadata": {}, "path": []},
	"object": {"metadata": {"namespace": ns}},
	"namespace": {"name": ns},
}

denied(ns, patterns, image) if {
	count(digest_required.deny) == 1 with input as inp(ns, image) with data.stockade.config as cfg(patterns)
}

allowed(ns, patterns, image) if {
	count(digest_required.deny) == 0 with input as inp(ns, image) with data.stockade.config as cfg(patterns)
}

sha256 := "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

test_not_required_by_default if {
	allowed("prod", [], "nginx:1.25")
}

test_namespace_not_matched_allowed if {
	allowed("dev", ["prod", "prod-*"], "nginx:1.25")
}

test_tag_denied_in_matching_namespace if {
	denied("prod", ["prod"], "nginx:1.25")
	denied("prod-eu", ["prod-*"], "nginx:1.25")
	denied("anything", ["*"], "nginx")
	some v in digest_required.deny with input as inp("prod", "nginx:1.25") with data.stockade.config as cfg(["prod"])
	v.path == ["spec", "containers", 0, "image"]
	v.msg == "container \"c\" image \"nginx:1.25\" is not pinned by digest (namespace \"prod\" requires image@sha256:...)"
}

test_digest_allowed if {
	allowed("prod", ["prod"], concat("@", ["nginx", sha256]))
	allowed("prod", ["prod"], concat("@", ["nginx:1.25", sha256]))
	allowed("prod", ["prod"], concat("@", ["reg:5000/app", sha256]))
}

test_other_registered_algorithms if {
	allowed("prod", ["prod"], concat("", ["nginx@sha384:", concat("", [x | some _ in numbers.range(1, 96); x := "a"])]))
	allowed("prod", ["prod"], concat("", ["nginx@sha512:", concat("", [x | some _ in numbers.range(1, 128); x := "a"])]))
}

# A malformed digest or an algorithm the runtime does not know makes the text no image reference:
# STK-IMG-005 reports it, this rule does not judge it.
test_invalid_references_not_judged if {
	allowed("prod", ["prod"], "nginx@sha256:abc")
	allowed("prod", ["prod"], "nginx@sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef")
	allowed("prod", ["prod"], "nginx@sha512:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	allowed("prod", ["prod"], "nginx@")
	allowed("prod", ["prod"], concat("", ["nginx@blake3:", concat("", [x | some _ in numbers.range(1, 64); x := "a"])]))
	allowed("prod", ["prod"], "nginx@custom-algo:AbC=_-")
	allowed("prod", ["prod"], "FILLED BY THE OPERATOR")
}

test_namespace_from_gate_when_object_has_none if {
	i := {
		"pod": {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}, "metadata": {}, "path": []},
		"object": {"metadata": {}},
		"namespace": {"name": "prod"},
	}
	count(digest_required.deny) == 1 with input as i with data.stockade.config as cfg(["prod"])
}

test_unknown_namespace_not_required if {
	i := {"pod": {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}, "metadata": {}, "path": []}, "object": {}, "namespace": {}}
	count(digest_required.deny) == 0 with input as i with data.stockade.config as cfg(["prod"])
}
