# METADATA
# title: Role execs, attaches or port-forwards into pods
# description: >-
#   pods/exec, pods/attach and pods/portforward run commands in, attach to, or open ports of running
#   containers, with their ServiceAccount tokens and mounted Secrets. create counts; get counts too when
#   rbac.kubernetes_version is before 1.35, where a WebSocket upgrade was authorized as get alone (from
#   1.35 it needs create as well). Rules granting it for some resourceNames
#   count too (those objects are still reachable). System bootstrap objects are out of scope unless
#   scope.include_system_rbac.
# custom:
#   id: STK-RBAC-012
#   severity: high
#   kinds: [Role, ClusterRole]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Remove these subresources from standing roles; grant them just in time to named operators.
package stockade.rbac.pod_exec

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-012")
