# METADATA
# title: Role reaches the kubelet through nodes/proxy
# description: >-
#   get or create on nodes/proxy gives the kubelet API of every node: running commands in any container
#   on it, bypassing admission control and audit logging of exec. Rules granting it for some
#   resourceNames count too (those objects are still reachable). System bootstrap objects are out of
#   scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-005
#   severity: critical
#   kinds: [Role, ClusterRole]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Use the metrics and logs APIs instead; monitoring agents that need kubelet metrics should use
#     nodes/metrics and nodes/stats.
package stockade.rbac.nodes_proxy

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-005")
