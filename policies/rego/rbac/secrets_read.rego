# METADATA
# title: Role reads Secrets
# description: >-
#   get, list or watch on secrets returns every Secret's data, including legacy ServiceAccount token
#   Secrets and the credentials of other workloads; list and watch return all of them at once. Rules
#   granting it for some resourceNames count too (those objects are still reachable). System bootstrap
#   objects are out of scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-002
#   severity: high
#   kinds: [Role, ClusterRole]
#   frameworks: [CIS-5.1.2, NSA-CISA, rbac-good-practices]
#   remediation: >-
#     Give the workload only the named Secrets it needs (resourceNames with get), or mount them as
#     volumes instead of reading them through the API.
package stockade.rbac.secrets_read

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-002")
