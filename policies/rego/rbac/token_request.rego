# METADATA
# title: Role mints ServiceAccount tokens
# description: >-
#   create on serviceaccounts/token issues tokens for ServiceAccounts of the namespace, so the subject
#   can act as any of them. Rules granting it for some resourceNames count too (those objects are still
#   reachable). System bootstrap objects are out of scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-009
#   severity: high
#   kinds: [Role, ClusterRole]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Remove the permission, or name the ServiceAccounts with resourceNames (tokens for those only).
package stockade.rbac.token_request

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-009")
