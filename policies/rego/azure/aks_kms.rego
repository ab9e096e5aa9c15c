# METADATA
# title: AKS cluster without KMS encryption of etcd
# description: >-
#   securityProfile.azureKeyVaultKms.enabled must be true, so that Secrets in etcd (registry
#   credentials, storage keys, API keys of model endpoints) are encrypted with a key held in Key
#   Vault; and that key vault should be private (keyVaultNetworkAccess Private, reached through
#   the cluster's VNet; the default is Public). REST properties of
#   Microsoft.ContainerService/managedClusters, api-version 2024-02-01.
# custom:
#   id: STK-AZ-032
#   severity: medium
#   kinds: [Microsoft.ContainerService/managedClusters]
#   frameworks: [aks-baseline, azure-policy-dbbdc317-9734-4dd8-9074-993b29c69008, MCSB-DP-5]
#   remediation: >-
#     az aks update --enable-azure-keyvault-kms --azure-keyvault-kms-key-id KEY_ID
#     --azure-keyvault-kms-key-vault-network-access Private --azure-keyvault-kms-key-vault-resource-id VAULT_ID
package stockade.azure.aks_kms

import data.stockade.lib.arm
import rego.v1

kms := arm.prop(["securityProfile", "azureKeyVaultKms"], {})

deny contains v if {
	object.get(kms, "enabled", false) != true
	v := {
		"msg": "etcd is not encrypted with a Key Vault key (securityProfile.azureKeyVaultKms.enabled is not true)",
		"path": arm.path(["securityProfile", "azureKeyVaultKms"]),
		"details": {},
	}
}

deny contains v if {
	object.get(kms, "enabled", false) == true
	access := object.get(kms, "keyVaultNetworkAccess", "Public")
	lower(access) != "private"
	v := {
		"msg": sprintf("the KMS key vault is reached over public networks (keyVaultNetworkAccess %s)", [access]),
		"path": arm.path(["securityProfile", "azureKeyVaultKms", "keyVaultNetworkAccess"]),
		"details": {"keyVaultNetworkAccess": access},
	}
}
