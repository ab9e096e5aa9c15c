# METADATA
# title: Role may escalate or bind roles
# description: >-
#   The escalate verb lets a subject write roles with permissions it does not hold, and bind lets it
#   bind roles it does not hold; either one defeats RBAC's escalation prevention and leads to cluster-
#   admin. Rules granting it for some resourceNames count too (those objects are still reachable).
#   System bootstrap objects are out of scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-006
#   severity: critical
#   kinds: [Role, ClusterRole]
#   frameworks: [CIS-5.1.8, rbac-good-practices]
#   remediation: >-
#     Remove escalate and bind; RBAC administrators who need them should be break-glass subjects, and
#     bind should name the roles (resourceNames).
package stockade.rbac.escalate_bind

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-006")
