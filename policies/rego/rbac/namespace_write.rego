# METADATA
# title: Role updates Namespaces
# description: >-
#   patch or update on namespaces changes their labels: the Pod Security enforce level, the labels
#   network policies and stockade's own scope select on. Rules granting it for some resourceNames count
#   too (those objects are still reachable). System bootstrap objects are out of scope unless
#   scope.include_system_rbac.
# custom:
#   id: STK-RBAC-011
#   severity: medium
#   kinds: [Role, ClusterRole]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Manage Namespaces from the platform's GitOps repository; tenants get no write access to them.
package stockade.rbac.namespace_write

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-011")
