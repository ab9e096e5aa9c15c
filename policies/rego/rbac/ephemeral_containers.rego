# METADATA
# title: Role adds ephemeral containers to pods
# description: >-
#   update or patch on pods/ephemeralcontainers adds a debugging container to a running pod: it runs
#   with the pod's ServiceAccount, volumes and namespaces. Rules granting it for some resourceNames
#   count too (those objects are still reachable). System bootstrap objects are out of scope unless
#   scope.include_system_rbac.
# custom:
#   id: STK-RBAC-013
#   severity: high
#   kinds: [Role, ClusterRole]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Grant pods/ephemeralcontainers just in time to named operators, not in standing roles.
package stockade.rbac.ephemeral_containers

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-013")
