package stockade.exposure.aggregated_api_tls_test

import data.stockade.exposure.aggregated_api_tls
import rego.v1

# kube-prometheus' prometheus-adapter APIService, as its manifests write it
api_service(spec) := {
	"apiVersion": "apiregistration.k8s.io/v1",
	"kind": "APIService",
	"metadata": {"name": "v1beta1.metrics.k8s.io"},
	"spec": object.union(
		{
			"group": "metrics.k8s.io",
			"version": "v1beta1",
			"service": {"name": "prometheus-adapter", "namespace": "monitoring"},
			"groupPriorityMinimum": 100,
			"versionPriority": 100,
		},
		spec,
	),
}

test_skipped_verification_reported if {
	found := aggregated_api_tls.deny with input as {"object": api_service({"insecureSkipTLSVerify": true})}
	count(found) == 1
	some v in found
	v.path == ["spec", "insecureSkipTLSVerify"]
	v.msg == "APIService \"v1beta1.metrics.k8s.io\" sets insecureSkipTLSVerify: the API server sends the requests for metrics.k8s.io/v1beta1 to Service monitoring/prometheus-adapter without verifying its certificate, so whoever answers for that Service answers for the API (set caBundle)"
}

test_verified_or_local_not_reported if {
	count(aggregated_api_tls.deny) == 0 with input as {"object": api_service({"caBundle": "LS0tLS1CRUdJTg=="})}
	count(aggregated_api_tls.deny) == 0 with input as {"object": api_service({"insecureSkipTLSVerify": false})}
	# served by the API server itself: nothing is proxied
	local := json.remove(api_service({"insecureSkipTLSVerify": true}), ["spec/service"])
	count(aggregated_api_tls.deny) == 0 with input as {"object": local}
}
