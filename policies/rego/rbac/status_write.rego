# METADATA
# title: Role rewrites status that steers traffic or scheduling
# description: >-
#   update or patch on nodes changes node labels and taints (nodeSelectors and affinities then draw
#   other workloads onto a node the subject controls, or cordon the others); on nodes/status, the
#   node's addresses (where the API server sends exec, attach and log traffic) and capacity; on
#   pods/status it can put a pod into a Service's endpoints; on services/status it sets a
#   LoadBalancer ingress IP and intercepts traffic (CVE-2020-8554). rbac-police calls these
#   modify_node_status, modify_pod_status, modify_service_status and steal_pods. A namespaced Role
#   never grants nodes. System bootstrap objects are out of scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-015
#   severity: medium
#   kinds: [Role, ClusterRole]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Leave status writes to the kubelet and controllers; give operators that need node labels
#     only the nodes they manage (resourceNames).
package stockade.rbac.status_write

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-015")
