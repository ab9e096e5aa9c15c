# METADATA
# title: Role writes admission webhook configurations
# description: >-
#   Writing validating or mutating webhook configurations lets a subject read every object admitted
#   (including Secrets), mutate them, or remove the policy webhooks, stockade's included. Rules granting
#   it for some resourceNames count too (those objects are still reachable). System bootstrap objects
#   are out of scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-010
#   severity: high
#   kinds: [Role, ClusterRole]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Only the operators that own webhooks (cert-manager, the policy engine) should write them, with
#     resourceNames naming their own configurations.
package stockade.rbac.admission_webhooks

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-010")
