# METADATA
# title: Role may impersonate
# description: >-
#   impersonate on users, groups, serviceaccounts, or authentication.k8s.io uids and userextras lets a
#   subject send requests as another identity and hold its permissions. Rules granting it for some
#   resourceNames count too (those objects are still reachable). System bootstrap objects are out of
#   scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-007
#   severity: critical
#   kinds: [Role, ClusterRole]
#   frameworks: [CIS-5.1.8, rbac-good-practices]
#   remediation: >-
#     Remove impersonate; where a proxy must impersonate, name the identities with resourceNames and
#     except the proxy's role.
package stockade.rbac.impersonate

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-007")
