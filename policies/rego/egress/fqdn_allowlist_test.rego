package stockade.egress.fqdn_allowlist_test

import data.stockade.egress.fqdn_allowlist
import rego.v1

cfg := {"egress": {"allow": [{"namespaces": ["ml"], "fqdns": ["*.blob.core.windows.net", "pypi.org"]}]}}

cnp(ns, fqdns) := {"object": {
	"kind": "CiliumNetworkPolicy",
	"metadata": {"name": "p", "namespace": ns},
	"spec": {"endpointSelector": {}, "egress": [{"toFQDNs": fqdns}]},
}}

denied(inp) := {v.path | some v in fqdn_allowlist.deny with input as inp with data.stockade.config as cfg}

test_covered_names_and_patterns_allowed if {
	denied(cnp("ml", [{"matchName": "acct.blob.core.windows.net"}, {"matchName": "PyPI.org."}])) == set()
	denied(cnp("ml", [{"matchPattern": "*.blob.core.windows.net"}])) == set()
}

test_uncovered_name_denied if {
	denied(cnp("ml", [{"matchName": "evil.example.com"}])) == {["spec", "egress", 0, "toFQDNs", 0, "matchName"]}
}

test_star_does_not_cross_labels if {
	count(denied(cnp("ml", [{"matchName": "a.b.blob.core.windows.net"}]))) == 1
	count(denied(cnp("ml", [{"matchPattern": "*"}]))) == 1
}

test_other_namespace_denied if {
	count(denied(cnp("web", [{"matchName": "pypi.org"}]))) == 1
}

test_specs_list_paths if {
	inp := {"object": {
		"kind": "CiliumClusterwideNetworkPolicy",
		"metadata": {"name": "p"},
		"specs": [{"endpointSelector": {}, "egress": [{"toFQDNs": [{"matchName": "pypi.org"}]}]}],
	}}
	denied(inp) == {["specs", 0, "egress", 0, "toFQDNs", 0, "matchName"]}
}
