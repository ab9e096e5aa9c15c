# METADATA
# title: ServiceAccount has a workload identity but the pod does not use it
# description: >-
#   A ServiceAccount annotated with azure.workload.identity/client-id is meant for Azure Workload
#   Identity, but the webhook only projects the federated token into pods labelled
#   azure.workload.identity/use: "true". A pod of that ServiceAccount without the label runs without
#   its identity, and such workloads tend to fall back to account keys or other long-lived
#   credentials. The ServiceAccount's annotations come from input.facts.serviceAccount.
# custom:
#   id: STK-ID-002
#   severity: medium
#   kinds: ["@workloads"]
#   triggers: ['azure.workload.identity']
#   frameworks: [workload-identity]
#   remediation: >-
#     Add the label azure.workload.identity/use: "true" to the pod template (not to the workload's own
#     metadata), or remove the client-id annotation from a ServiceAccount that is not meant for it.
package stockade.identity.workload_identity_label

import data.stockade.lib.pods
import rego.v1

label := "azure.workload.identity/use"

annotation := "azure.workload.identity/client-id"

sa := input.facts.serviceAccount if is_object(input.facts.serviceAccount)

deny contains v if {
	client_id := object.get(sa, ["annotations", annotation], "")
	trim_space(client_id) != ""
	value := object.get(input.pod.metadata, ["labels", label], null)
	value != "true"
	v := {
		"msg": sprintf("ServiceAccount %q has a workload identity (%s) but the pod is not labelled %s: \"true\"", [sa.name, annotation, label]),
		"path": pods.metadata_path(["labels"]),
		"details": {"serviceAccount": sa.name, "label": value},
	}
}
