# The ServiceAccount token a pod gets automounted, decided as Kubernetes does: the pod's
# automountServiceAccountToken if set, else the ServiceAccount's (input.facts.serviceAccount, from the
# gate's inventory), else true. Without facts only the pod's own setting is known and an unset one
# counts as mounted. Read by STK-SA-001 and STK-RT-007.
package stockade.lib.tokens

import rego.v1

sa_facts := input.facts.serviceAccount if is_object(input.facts.serviceAccount)

sa_name := n if {
	n := sa_facts.name
	is_string(n)
} else := n if {
	n := input.pod.spec.serviceAccountName
	is_string(n)
	n != ""
} else := n if {
	n := input.pod.spec.serviceAccount
	is_string(n)
	n != ""
} else := "default"

# [mounted, why]
mount := [sa_facts.tokenMounted, reason] if {
	is_boolean(sa_facts.tokenMounted)
	reason := why
} else := [input.pod.spec.automountServiceAccountToken, "the pod sets automountServiceAccountToken"] if {
	is_boolean(input.pod.spec.automountServiceAccountToken)
} else := [true, "automountServiceAccountToken is unset and the ServiceAccount's setting is not known"]

why := "the pod sets automountServiceAccountToken: true" if {
	input.pod.spec.automountServiceAccountToken == true
} else := sprintf("the pod leaves it unset and ServiceAccount %q sets automountServiceAccountToken: true", [sa_name]) if {
	sa_facts.automountServiceAccountToken == true
} else := sprintf("neither the pod nor ServiceAccount %q sets automountServiceAccountToken", [sa_name]) if {
	seen_or_default
} else := sprintf("the pod leaves automountServiceAccountToken unset and ServiceAccount %q is not among the objects read (its setting is not known)", [sa_name])

# The ServiceAccount's object was read, or it is a namespace's "default" account, which Kubernetes
# creates without automountServiceAccountToken: what it sets is known either way.
seen_or_default if sa_facts.known == true

seen_or_default if sa_name == "default"

