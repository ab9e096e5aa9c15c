# METADATA
# title: Azure AI services / Azure OpenAI account accepts API keys
# description: >-
#   disableLocalAuth must be true: account keys are shared secrets that bypass Entra ID, cannot be
#   tied to a workload and are valid from wherever the endpoint is reachable. Unset means keys are
#   accepted. REST property of Microsoft.CognitiveServices/accounts, api-version 2023-05-01.
# custom:
#   id: STK-AZ-028
#   severity: high
#   kinds: [Microsoft.CognitiveServices/accounts]
#   frameworks: [azure-policy-71ef260a-8f18-47b7-abcb-62d0673d94dc, MCSB-IM-1]
#   remediation: >-
#     az resource update --ids ACCOUNT_ID --set properties.disableLocalAuth=true, after giving the
#     callers' managed identities the Cognitive Services OpenAI User (or User) role.
package stockade.azure.ai_local_auth

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["disableLocalAuth"], false) != true
	v := {
		"msg": "Azure AI services account accepts API keys (disableLocalAuth is not true)",
		"path": arm.path(["disableLocalAuth"]),
		"details": {},
	}
}
