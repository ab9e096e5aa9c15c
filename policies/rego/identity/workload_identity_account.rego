# METADATA
# title: Workload identity pod whose ServiceAccount has no client id
# description: >-
#   A pod labelled azure.workload.identity/use: "true" asks the Azure Workload Identity webhook to
#   project a federated token for the Entra ID application named by its ServiceAccount's
#   azure.workload.identity/client-id annotation. Without that annotation the pod gets no usable
#   identity, and such workloads tend to fall back to account keys or shared credentials. The
#   ServiceAccount's annotations come from input.facts.serviceAccount; when the ServiceAccount was not
#   seen (a scan of some files) nothing is reported, and when the inventory is complete a missing
#   ServiceAccount is reported.
# custom:
#   id: STK-ID-001
#   severity: medium
#   kinds: ["@workloads"]
#   triggers: ['azure.workload.identity']
#   frameworks: [workload-identity]
#   remediation: >-
#     Annotate the pod's ServiceAccount with azure.workload.identity/client-id: <application client
#     id> and create the federated identity credential for system:serviceaccount:<namespace>:<name>.
package stockade.identity.workload_identity_account

import data.stockade.lib.pods
import rego.v1

label := "azure.workload.identity/use"

annotation := "azure.workload.identity/client-id"

sa := input.facts.serviceAccount if is_object(input.facts.serviceAccount)

uses_identity if object.get(input.pod.metadata, ["labels", label], "") == "true"

client_id := object.get(sa, ["annotations", annotation], "")

deny contains v if {
	uses_identity
	sa.known == true
	trim_space(client_id) == ""
	v := {
		"msg": sprintf("the pod uses workload identity but ServiceAccount %q has no %s annotation", [sa.name, annotation]),
		"path": pods.metadata_path(["labels", label]),
		"details": {"serviceAccount": sa.name},
	}
}

deny contains v if {
	uses_identity
	sa.exists == false
	v := {
		"msg": sprintf("the pod uses workload identity but its ServiceAccount %q does not exist", [sa.name]),
		"path": pods.metadata_path(["labels", label]),
		"details": {"serviceAccount": sa.name},
	}
}
