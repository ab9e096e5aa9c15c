# METADATA
# title: Container registry allows anonymous pull
# description: >-
#   anonymousPullEnabled must not be true: anyone who reaches the registry could pull every image,
#   including images with model weights baked in. Unset means false. REST property of
#   Microsoft.ContainerRegistry/registries (added in api-version 2023-01-01-preview, GA in 2023-07-01).
# custom:
#   id: STK-AZ-023
#   severity: high
#   kinds: [Microsoft.ContainerRegistry/registries]
#   frameworks: [azure-policy-9f2dea28-e834-476c-99c5-3507b4728395, MCSB-IM-1]
#   remediation: az acr update --anonymous-pull-enabled false
package stockade.azure.acr_anonymous_pull

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["anonymousPullEnabled"], false) == true
	v := {
		"msg": "container registry allows unauthenticated pulls (anonymousPullEnabled true)",
		"path": arm.path(["anonymousPullEnabled"]),
		"details": {},
	}
}

# A value known only at deployment is the worst case, and says so.
deny contains v if {
	arm.unknown(arm.prop(["anonymousPullEnabled"], false))
	v := {
		"msg": sprintf("container registry may allow unauthenticated pulls: anonymousPullEnabled%s", [arm.why(["anonymousPullEnabled"])]),
		"path": arm.path(["anonymousPullEnabled"]),
		"details": {},
	}
}
