# METADATA
# title: ServiceAccount token mounted without need
# description: >-
#   A pod gets a token for its ServiceAccount unless automounting is turned off; anyone who compromises
#   a container then holds whatever that ServiceAccount may do in the cluster. Workloads must not mount
#   the token unless they are API clients: the pod asks for the token itself
#   (automountServiceAccountToken: true, the workload's declared intent), a binding names its
#   ServiceAccount (input.facts.rbac.bound, from the RBAC graph of the gate: a group such as
#   system:serviceaccounts does not count), a container runs kubectl (its command or arguments: kubectl
#   proxy, a Job's kubectl apply), or service_accounts.api_clients selects it (namespaces,
#   kinds, names: shell-style globs; labels: exact values of the object's labels; empty fields match
#   anything). Whether the token is mounted is decided as Kubernetes does: the pod's
#   automountServiceAccountToken if set, else the ServiceAccount's, else true. The ServiceAccount's
#   setting comes from input.facts.serviceAccount (computed from the inventory of the gate); without
#   facts only the pod's own setting is known and an unset one counts as mounted. A projected
#   serviceAccountToken volume source is a mounted token too, whatever automountServiceAccountToken
#   says, when the API server accepts it: its audience is unset (the API server's own) or listed in
#   service_accounts.api_audiences. A token for another audience (Azure workload identity's
#   api://AzureADTokenExchange, Vault) is not a Kubernetes API credential. Who decides the account is
#   the kinds table's (input.pod.account): a pod spec without the fields (KServe's ServingRuntime,
#   whose InferenceService names the account and is judged for it) mounts no token of its own, and
#   an account an operator sets and binds its own Role to (KubeRay's autoscaling head) is an API
#   client.
# custom:
#   id: STK-SA-001
#   severity: medium
#   kinds: ["@workloads"]
#   frameworks: [CIS-5.1.6, NSA-CISA, pod-best-practice]
#   remediation: >-
#     Set automountServiceAccountToken: false in the pod template (or on its ServiceAccount). If the
#     workload calls the Kubernetes API, add it to service_accounts.api_clients and give its dedicated
#     ServiceAccount least-privilege RBAC.
package stockade.serviceaccount.token_mount

import data.stockade.lib.pods
import data.stockade.lib.tokens
import rego.v1

api_clients := object.get(data.stockade.config, ["service_accounts", "api_clients"], [])

sa_name := tokens.sa_name

mount := tokens.mount

md := object.get(input.object, "metadata", {})

labels := object.get(md, "labels", {})

matches(patterns, _) if count(patterns) == 0

matches(patterns, value) if {
	is_string(value)
	some pattern in patterns
	glob.match(pattern, null, value)
}

# declared intent: the pod asks for the token
api_client if input.pod.spec.automountServiceAccountToken == true

# an operator sets the account and binds its own Role to it (KubeRay's autoscaler)
api_client if input.pod.account.apiClient == true

inherited if input.pod.account.source == "inherited"

# a container runs kubectl (kubeflow's cluster-jwks-proxy runs `kubectl proxy`, a Job `kubectl
# apply`): the token is what it uses
api_client if {
	some entry in pods.containers
	some part in array.concat(object.get(entry.container, "command", []), object.get(entry.container, "args", []))
	is_string(part)
	contains(part, "kubectl") # the VM's regex costs tens of microseconds a pod: asked only here
	regex.match(`(^|[\s/;&|(])kubectl(\s|$)`, part)
}

# a binding names the ServiceAccount itself
api_client if input.facts.rbac.bound == true

api_client if {
	some sel in api_clients
	matches(object.get(sel, "namespaces", []), pods.object_namespace)
	matches(object.get(sel, "kinds", []), input.object.kind)
	matches(object.get(sel, "names", []), object.get(md, "name", null))
	every key, value in object.get(sel, "labels", {}) {
		labels[key] == value
	}
}

automount_reported if {
	mount[0] == true
	not inherited
}

deny contains v if {
	automount_reported
	not api_client
	v := {
		"msg": sprintf(
			"pods mount the token of ServiceAccount %q (%s) but the workload is not an API client (service_accounts.api_clients)",
			[sa_name, mount[1]],
		),
		"path": pods.spec_path(["automountServiceAccountToken"]),
		"details": {"serviceAccount": sa_name},
	}
}

# A projected token the API server accepts, whatever automountServiceAccountToken says (the pod asked
# for it by name). Reported only where the automounted token is not reported already.
deny contains v if {
	not automount_reported
	some p in pods.api_token_projections # most pods have none: api_client (every argument read) is not asked
	not api_client
	v := {
		"msg": sprintf(
			"volume %q projects a token of %s that the Kubernetes API accepts (%s) but the workload is not an API client (service_accounts.api_clients)",
			[p.volume, account_text, audience_text(p.audience)],
		),
		"path": p.path,
		"details": {"serviceAccount": sa_name, "volume": p.volume},
	}
}

account_text := sprintf("the ServiceAccount its %s names", [input.pod.account.by]) if inherited

else := sprintf("ServiceAccount %q", [sa_name])

audience_text("") := "no audience: the API server's own"

audience_text(a) := sprintf("audience %q", [a]) if a != ""
