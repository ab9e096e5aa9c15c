# METADATA
# title: AKS Image Cleaner disabled
# description: >-
#   securityProfile.imageCleaner.enabled must be true: Image Cleaner removes unused images from the
#   nodes, so that vulnerable or superseded images (and weights baked into them) do not linger on
#   disk. REST property of Microsoft.ContainerService/managedClusters, api-version 2024-02-01.
# custom:
#   id: STK-AZ-034
#   severity: low
#   kinds: [Microsoft.ContainerService/managedClusters]
#   frameworks: [aks-baseline, azure-policy-af3c26b2-6fad-493e-9236-9c68928516ab, MCSB-PV-5]
#   remediation: az aks update --enable-image-cleaner [--image-cleaner-interval-hours 24]
package stockade.azure.aks_image_cleaner

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["securityProfile", "imageCleaner", "enabled"], false) != true
	v := {
		"msg": "Image Cleaner is not enabled (securityProfile.imageCleaner.enabled is not true)",
		"path": arm.path(["securityProfile", "imageCleaner"]),
		"details": {},
	}
}
