# METADATA
# title: Role creates Secrets
# description: >-
#   create on secrets lets a subject write a Secret of type kubernetes.io/service-account-token
#   naming any ServiceAccount of the namespace: the token controller fills it with a long-lived token
#   for that account, which whoever can read the Secret (or mount it in a pod) then uses. rbac-police
#   calls it issue_token_secrets. The escalation path (create and read) is STK-RBAC-031's. A create
#   never matches a rule with resourceNames. System bootstrap objects are out of scope unless
#   scope.include_system_rbac.
# custom:
#   id: STK-RBAC-014
#   severity: medium
#   kinds: [Role, ClusterRole]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Let a controller (External Secrets, sealed-secrets) write Secrets; keep create on secrets
#     away from people and workloads, and disable legacy token Secrets where the cluster allows.
package stockade.rbac.secrets_create

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-014")
