# METADATA
# title: Restricted volume types
# description: >-
#   Pod Security Standards (restricted), mirroring Pod Security Admission check "restrictedVolumes"
#   (check_restrictedVolumes.go). Inline volumes are limited to configMap, csi, downwardAPI, emptyDir,
#   ephemeral, image, persistentVolumeClaim, projected and secret (image allowed since v1.33, in the
#   v1.0 check itself). Every other source (hostPath, nfs, iscsi, gitRepo, cephfs, ...) and any
#   unknown source is rejected. A volume with a name and no source is what the API server defaults to
#   emptyDir, so it is allowed. A hostPath volume is STK-POD-005's (baseline, which the restricted
#   level includes): one finding per volume, not one per rule that rejects it.
# custom:
#   id: STK-POD-101
#   severity: medium
#   kinds: ["@workloads"]
#   frameworks: [pss-restricted, NSA-CISA]
#   remediation: >-
#     Use one of the allowed volume types; reach network or cloud storage through a
#     PersistentVolumeClaim or a CSI driver.
package stockade.pod.volume_types

import data.stockade.lib.pods
import rego.v1

allowed_sources := {
	"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
	"image", "persistentVolumeClaim", "projected", "secret",
}

# The order in which PSA names the restricted type of a volume.
restricted_sources := [
	"hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs",
	"rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile", "vsphereVolume", "quobyte",
	"azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "storageos",
]

sources(volume) := {key | some key, value in volume; key != "name"; value != null}

# The restricted source of a volume's sources: the first known one in PSA's order, else an unknown one.
bad_source(srcs) := s if {
	known := [k | some k in restricted_sources; k in srcs]
	count(known) > 0
	s := known[0]
} else := s if {
	s := sort(srcs)[0]
}

deny contains v if {
	pods.restricted
	some i, volume in input.pod.spec.volumes
	is_object(volume)
	srcs := sources(volume)
	count(srcs) > 0
	count(srcs & allowed_sources) == 0
	# STK-POD-005 reports hostPath, the first restricted source in PSA's order (so it would be the one
	# named): decided before the 21 known types are looked up
	not "hostPath" in srcs
	source := bad_source(srcs)
	v := {
		"msg": sprintf("volume %q uses restricted volume type %s", [object.get(volume, "name", ""), source]),
		"path": pods.spec_path(["volumes", i, source]),
		"details": {"type": source},
	}
}
