package stockade.egress.fqdn_dns_proxy_test

import data.stockade.egress.fqdn_dns_proxy
import rego.v1

fqdn_rule := {"toFQDNs": [{"matchName": "pypi.org"}], "toPorts": [{"ports": [{"port": "443", "protocol": "TCP"}]}]}

dns_rule := {
	"toEndpoints": [{"matchLabels": {"k8s:io.kubernetes.pod.namespace": "kube-system", "k8s-app": "kube-dns"}}],
	"toPorts": [{"ports": [{"port": "53", "protocol": "ANY"}], "rules": {"dns": [{"matchPattern": "*"}]}}],
}

cnp(egress) := {"object": {
	"kind": "CiliumNetworkPolicy",
	"metadata": {"name": "p", "namespace": "ml"},
	"spec": {"endpointSelector": {}, "egress": egress},
}}

test_with_dns_proxy_rule_allowed if {
	count(fqdn_dns_proxy.deny) == 0 with input as cnp([fqdn_rule, dns_rule])
}

test_without_dns_proxy_rule_denied if {
	some v in fqdn_dns_proxy.deny with input as cnp([fqdn_rule])
	v.path == ["spec", "egress", 0, "toFQDNs"]
}

test_dns_port_without_rules_is_not_enough if {
	plain_dns := object.remove(dns_rule, ["toPorts"])
	count(fqdn_dns_proxy.deny) == 1 with input as cnp([fqdn_rule, object.union(plain_dns, {"toPorts": [{"ports": [{"port": "53"}]}]})])
}

test_no_fqdns_allowed if {
	count(fqdn_dns_proxy.deny) == 0 with input as cnp([{"toEntities": ["cluster"]}])
}
