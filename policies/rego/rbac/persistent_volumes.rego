# METADATA
# title: Role creates PersistentVolumes
# description: >-
#   Creating a PersistentVolume allows a hostPath volume onto any node's filesystem, which a pod then
#   mounts through a claim, bypassing the Pod Security rules on hostPath. Rules granting it for some
#   resourceNames count too (those objects are still reachable). System bootstrap objects are out of
#   scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-004
#   severity: high
#   kinds: [Role, ClusterRole]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Let only the storage provisioners create PersistentVolumes; users create PersistentVolumeClaims of
#     a StorageClass instead.
package stockade.rbac.persistent_volumes

import data.stockade.lib.rbac
import rego.v1

deny contains v if some v in rbac.permission_violations("STK-RBAC-004")
