# METADATA
# title: Aggregated API served without verifying its server
# description: >-
#   An APIService with insecureSkipTLSVerify makes the API server proxy every request for its group
#   and version (metrics.k8s.io for metrics-server and prometheus-adapter, custom and external metrics
#   for autoscalers, an operator's own API) to the Service without checking its certificate. Whoever
#   answers for that Service (a pod that takes over its endpoints, anything on the path between the
#   API server and the pod) then answers for the API: forged metrics steer the HorizontalPodAutoscaler,
#   forged objects reach every client, and the requests' bodies are read. caBundle names the CA the
#   API server checks the Service's certificate against. An APIService the API server serves itself
#   (no spec.service) is not proxied. Action warn: metrics-server's and prometheus-adapter's default
#   manifests set it, and a scan should tell rather than fail their install.
# custom:
#   id: STK-EXP-003
#   severity: medium
#   action: warn
#   kinds: [APIService]
#   frameworks: [exposure-best-practice]
#   remediation: >-
#     Serve the extension API with a certificate from a CA you control (cert-manager's CA injector
#     fills caBundle from a Certificate: annotate the APIService with cert-manager.io/inject-ca-from),
#     set spec.caBundle to that CA, and remove insecureSkipTLSVerify.
package stockade.exposure.aggregated_api_tls

import rego.v1

deny contains v if {
	input.object.kind == "APIService"
	input.object.spec.insecureSkipTLSVerify == true
	service := input.object.spec.service
	is_object(service)
	group := object.get(input.object.spec, "group", "")
	version := object.get(input.object.spec, "version", "")
	v := {
		"msg": sprintf(
			"APIService %q sets insecureSkipTLSVerify: the API server sends the requests for %s/%s to Service %s/%s without verifying its certificate, so whoever answers for that Service answers for the API (set caBundle)",
			[object.get(input.object.metadata, "name", ""), group, version, object.get(service, "namespace", ""), object.get(service, "name", "")],
		),
		"path": ["spec", "insecureSkipTLSVerify"],
		"details": {"group": group, "version": version},
	}
}
