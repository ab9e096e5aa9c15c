package stockade.pod.host_path_targets_test

import data.stockade.pod.host_path_targets
import rego.v1

defaults := [
	"/", "/proc", "/etc", "/dev/nvidia*", "/var/lib/kubelet", "/var/run/docker.sock", "/run/docker.sock",
	"/var/run/containerd", "/run/containerd", "/var/run/crio", "/run/crio", "/var/lib/docker", "/var/lib/containerd",
]

cfg(forbidden) := {"pss": {"default_level": "restricted"}, "host_paths": {"forbidden": forbidden}}

volumes(paths) := {"pod": {"spec": {"volumes": [{"name": sprintf("v%d", [i]), "hostPath": {"path": p}} | some i, p in paths]}, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

denied_with(path, forbidden) if {
	count(host_path_targets.deny) == 1 with input as volumes([path]) with data.stockade.config as cfg(forbidden)
}

denied(path) if denied_with(path, defaults)

allowed(path) if {
	count(host_path_targets.deny) == 0 with input as volumes([path]) with data.stockade.config as cfg(defaults)
}

test_harmless_paths_allowed if {
	allowed("/var/log")
	allowed("/var/log/pods")
	allowed("/tmp/data")
	allowed("/mnt/models")
	allowed("/var/lib/kubelet-plugins")
	allowed("/devices")
	allowed("/etcetera")
	allowed("/run/containerd-metrics")
}

test_exact_targets_denied if {
	denied("/var/run/docker.sock")
	denied("/run/containerd/containerd.sock")
	denied("/var/run/crio/crio.sock")
	denied("/var/lib/kubelet")
	denied("/proc")
	denied("/etc")
	denied("/")
}

test_device_glob if {
	denied("/dev/nvidia0")
	denied("/dev/nvidiactl")
	denied("/dev/nvidia-uvm")
	denied("/dev/nvidia-caps/nvidia-cap1")
	allowed("/dev/null")
	allowed("/dev/infiniband")
}

test_below_forbidden_directory_denied if {
	denied("/var/lib/kubelet/pods")
	denied("/var/lib/kubelet/pods/uid/volumes")
	denied("/proc/1/root")
	denied("/etc/kubernetes/pki")
}

test_root_pattern_forbids_only_root if {
	allowed_with_only_root("/var/log")
	denied_with("/", ["/"])
	denied_with("//", ["/"])
}

allowed_with_only_root(path) if {
	count(host_path_targets.deny) == 0 with input as volumes([path]) with data.stockade.config as cfg(["/"])
}

test_parent_of_forbidden_path_denied if {
	denied("/var/run")
	denied("/run")
	denied("/var/lib")
	denied("/var")
	denied("/dev")
	some v in host_path_targets.deny with input as volumes(["/dev"]) with data.stockade.config as cfg(defaults)
	v.msg == "volume \"v0\" mounts host path \"/dev\", which exposes forbidden /dev/nvidia*"
}

test_normalisation if {
	denied("/var/lib/kubelet/")
	denied("//var//lib//kubelet")
	denied("/var/lib/./kubelet")
	denied("/var/log/../lib/kubelet")
	denied("/tmp/../../proc")
	denied("/var/run/docker.sock/")
	allowed("/var/lib/kubelet/../../log")
}

test_forbidden_patterns_normalised_too if {
	denied_with("/srv/data", ["/srv//data/"])
}

test_path_and_message if {
	some v in host_path_targets.deny with input as volumes(["/tmp", "/var/lib/kubelet/pods"]) with data.stockade.config as cfg(defaults)
	v.path == ["spec", "volumes", 1, "hostPath", "path"]
	v.msg == "volume \"v1\" mounts host path \"/var/lib/kubelet/pods\", which lies under forbidden /var/lib/kubelet"
}

test_every_pss_level if {
	inp := object.union(volumes(["/dev/nvidia0"]), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": "privileged"}}})
	count(host_path_targets.deny) == 1 with input as inp with data.stockade.config as cfg(defaults)
}

test_template_path_prefixed if {
	inp := {"pod": {"spec": {"volumes": [{"name": "s", "hostPath": {"path": "/var/run/docker.sock"}}]}, "metadata": {}, "path": ["spec", "template"]}}
	some v in host_path_targets.deny with input as inp with data.stockade.config as cfg(defaults)
	v.path == ["spec", "template", "spec", "volumes", 0, "hostPath", "path"]
}

test_other_volumes_ignored if {
	inp := {"pod": {"spec": {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "hostPath": null}, {"name": "c", "hostPath": {"path": ""}}]}, "metadata": {}, "path": []}}
	count(host_path_targets.deny) == 0 with input as inp with data.stockade.config as cfg(defaults)
}

test_empty_forbidden_list_allows_everything if {
	count(host_path_targets.deny) == 0 with input as volumes(["/"]) with data.stockade.config as cfg([])
}

# issue 37: a single well-known file mounted read-only is not the host's /etc or /proc
mounted(path, mounts) := {"pod": {"spec": {
	"volumes": [{"name": "host", "hostPath": {"path": path}}],
	"containers": [{"name": sprintf("c%d", [i]), "volumeMounts": [m]} | some i, m in mounts],
}, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

deny_mounted(path, mounts) := d if {
	d := host_path_targets.deny with input as mounted(path, mounts) with data.stockade.config as cfg(defaults)
}

ro := {"name": "host", "mountPath": "/host/file", "readOnly": true}

rw := {"name": "host", "mountPath": "/host/file"}

test_read_only_well_known_files_allowed if {
	count(deny_mounted("/etc/localtime", [ro])) == 0
	count(deny_mounted("/etc/os-release", [ro, ro])) == 0
	count(deny_mounted("/proc/meminfo", [ro])) == 0
	count(deny_mounted("/etc//timezone", [ro])) == 0
}

test_writable_well_known_file_denied if {
	some v in deny_mounted("/etc/localtime", [rw])
	v.details.mount == "writable"
	contains(v.msg, "\"/etc/localtime\" writable")
	# one writable mount among read-only ones is enough
	count(deny_mounted("/etc/localtime", [ro, rw])) == 1
}

test_real_risks_still_denied_read_only if {
	count(deny_mounted("/etc/shadow", [ro])) == 1
	count(deny_mounted("/etc", [ro])) == 1
	count(deny_mounted("/proc", [ro])) == 1
	count(deny_mounted("/var/lib/kubelet/pki/kubelet-client-current.pem", [ro])) == 1
	count(deny_mounted("/var/run/docker.sock", [ro])) == 1
	some v in deny_mounted("/etc", [ro])
	v.details.mount == "read-only"
	contains(v.msg, "\"/etc\" read-only")
}

test_file_forbidden_by_its_own_path_denied if {
	d := host_path_targets.deny with input as mounted("/etc/localtime", [ro]) with data.stockade.config as cfg(array.concat(defaults, ["/etc/localtime"]))
	count(d) == 1
}

# Globs with a wildcard in a middle segment or alternatives: a path at, below or above a match.
test_globs_at_below_and_above_a_match if {
	denied_with("/var", ["/var/*/secrets"])
	denied_with("/var/app", ["/var/*/secrets"])
	denied_with("/var/app/secrets", ["/var/*/secrets"])
	denied_with("/var/app/secrets/token", ["/var/*/secrets"])
	allowed_with("/var/app/other", ["/var/*/secrets"])
	allowed_with("/va", ["/var/*/secrets"])
	allowed_with("/srv", ["/var/*/secrets"])
	denied_with("/opt/a", ["/opt/{a,b}/x"])
	denied_with("/opt/b/x/y", ["/opt/{a,b}/x"])
	allowed_with("/opt/c", ["/opt/{a,b}/x"])
	allowed_with("/op", ["/opt/{a,b}/x"])
	denied_with("/dev/nvidiafoo", ["/dev/nvidia*"])
	allowed_with("/dev/nv", ["/dev/nvidia*"])
}

allowed_with(path, forbidden) if {
	count(host_path_targets.deny) == 0 with input as volumes([path]) with data.stockade.config as cfg(forbidden)
}
