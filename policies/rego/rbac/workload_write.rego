# METADATA
# title: Role creates or updates pods or pod controllers
# description: >-
#   Whoever can create pods, or create or update the controllers that create them (Deployments,
#   StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs, ReplicationControllers), can run a pod as
#   any ServiceAccount of the namespace and mount its Secrets, ConfigMaps and volumes: in effect they
#   hold the union of those permissions. Whoever can only update or patch pods can change the image
#   of a pod already running (the one container field a pod's update may change) and so runs code as
#   that pod's ServiceAccount, with its volumes. Rules granting it for some resourceNames count too
#   (those objects are still reachable). System bootstrap objects are out of scope unless
#   scope.include_system_rbac.
# custom:
#   id: STK-RBAC-003
#   severity: medium
#   kinds: [Role, ClusterRole]
#   frameworks: [CIS-5.1.4, rbac-good-practices]
#   remediation: >-
#     Grant workload writes only to deployers (CI, GitOps controllers) and keep the namespaces they
#     deploy to free of privileged ServiceAccounts; except this rule for those deployers by name.
package stockade.rbac.workload_write

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-003")
