# METADATA
# title: Unauthenticated AI interface exposed outside the cluster
# description: >-
#   The Ray dashboard and Jobs API, the Ray client and GCS ports, Jupyter, TensorBoard, MLflow, Spark
#   and Dask dashboards, Gradio, Streamlit, Ollama and the Argo Workflows server have no
#   authentication of their own (or none by default): whoever reaches them runs code on the cluster or
#   reads its data. Reported when one is exposed beyond the cluster: a LoadBalancer or NodePort Service
#   port (matched by port, targetPort or port name, exposure.sensitive_ports; by name only where the
#   pods the Service selects are known: a number alone, 8888 or 5000, is every other web server's
#   too, and their images then say what answers) or, where no port tells, a LoadBalancer or NodePort
#   Service whose selected pods run such an interface's image (exposure.sensitive_images, among them
#   the KubeRay API server, which creates Ray clusters and jobs for any caller, unless the pods also
#   run the authenticating proxy its secure deployment adds; the pods come from the gate's
#   inventory), an Ingress backend on
#   such a port without an authenticating annotation of the ingress controller
#   (exposure.ingress_auth_annotations: nginx auth-url/auth-type, ALB auth-type, Traefik middlewares,
#   ...), or a Ray head Service of type LoadBalancer or NodePort (a RayCluster's, RayJob's or
#   RayService's headGroupSpec.serviceType or headService). An internal load balancer still exposes
#   the interface to the whole network. An Ingress that passes TLS through to the Ray client or GCS
#   port (nginx ssl-passthrough) is not reported: Ray's TLS is mutual (client certificates).
# custom:
#   id: STK-EXP-001
#   severity: critical
#   kinds: [Service, Ingress, "@workloads"]
#   triggers: ['"LoadBalancer"', '"NodePort"', '"Ingress"', '"rayHead"']
#   frameworks: [NSA-CISA, exposure-best-practice]
#   remediation: >-
#     Keep the Service ClusterIP and reach it with kubectl port-forward, or put it behind an
#     authenticating proxy (oauth2-proxy, the ingress controller's external auth) and restrict it with
#     a NetworkPolicy. For Ray, leave headGroupSpec.serviceType at ClusterIP.
package stockade.exposure.sensitive_interface

import data.stockade.lib.exposure
import rego.v1

md := object.get(input.object, "metadata", {})

annotations := object.get(md, "annotations", {})

service_type := object.get(input.object.spec, "type", "ClusterIP") if input.object.kind == "Service"

exposed_ports contains [i, whats] if {
	service_type in {"LoadBalancer", "NodePort"}
	some i, port in object.get(input.object.spec, "ports", [])
	whats := port_interfaces(port)
	count(whats) > 0
}

selected_images := object.get(input, ["facts", "exposure", "selectedImages"], [])

port_interfaces(port) := exposure.interfaces(port) if count(selected_images) == 0

port_interfaces(port) := exposure.named_interfaces(port) if count(selected_images) > 0

deny contains v if {
	some [i, whats] in exposed_ports
	type := service_type
	port := input.object.spec.ports[i]
	v := {
		"msg": sprintf("%s Service exposes the %s (port %v) outside the cluster, and it has no authentication of its own", [type, concat(" / ", sort(whats)), port.port]),
		"path": ["spec", "ports", i],
		"details": {"interfaces": sort(whats), "type": type},
	}
}

# No port tells, but the pods behind the Service run such an interface (their images).
deny contains v if {
	service_type in {"LoadBalancer", "NodePort"}
	count(exposed_ports) == 0
	images := {img | some img in selected_images; count(exposure.image_interfaces(img, selected_images)) > 0}
	count(images) > 0
	whats := {w | some img in images; some w in exposure.image_interfaces(img, selected_images)}
	v := {
		"msg": sprintf("%s Service exposes the %s (pods running %s) outside the cluster, and it has no authentication of its own", [service_type, concat(" / ", sort(whats)), concat(", ", sort(images))]),
		"path": ["spec", "type"],
		"details": {"interfaces": sort(whats), "type": service_type, "images": sort(images)},
	}
}

backends contains [path, backend] if {
	some i, rule in object.get(input.object.spec, "rules", [])
	some j, p in object.get(object.get(rule, "http", {}), "paths", [])
	backend := p.backend.service
	path := ["spec", "rules", i, "http", "paths", j, "backend", "service"]
}

backends contains [["spec", "defaultBackend", "service"], input.object.spec.defaultBackend.service]

authenticated if {
	some key in exposure.ingress_auth_annotations
	is_string(annotations[key])
	annotations[key] != ""
}

# TLS passed through to the backend (the ingress controller does not terminate it): Ray's own TLS is
# mutual (RAY_USE_TLS with RAY_TLS_CA_CERT: the client and GCS servers require a client certificate
# that CA signed), and a passthrough to a Ray port that does not speak TLS connects nobody.
passthrough if annotations["nginx.ingress.kubernetes.io/ssl-passthrough"] == "true"

mutual_tls := {"Ray client", "Ray GCS"}

unauthenticated(found) := found - mutual_tls if passthrough

else := found

deny contains v if {
	input.object.kind == "Ingress"
	not authenticated
	some [path, backend] in backends
	port := object.get(backend, "port", {})
	found := exposure.interfaces({"port": object.get(port, "number", null), "name": object.get(port, "name", null)})
	whats := unauthenticated(found)
	count(whats) > 0
	v := {
		"msg": sprintf("Ingress routes to the %s of Service %q without authentication (no exposure.ingress_auth_annotations annotation)", [concat(" / ", sort(whats)), object.get(backend, "name", "")]),
		"path": path,
		"details": {"interfaces": sort(whats), "service": object.get(backend, "name", "")},
	}
}

deny contains v if {
	some head in input.facts.exposure.rayHead
	v := {
		"msg": sprintf("the Ray head Service is of type %s: the Ray dashboard and Jobs API (8265), client (10001) and GCS (6379) are reachable outside the cluster without authentication", [head.type]),
		"path": head.path,
		"details": {"interfaces": ["Ray dashboard and Jobs API", "Ray client", "Ray GCS"], "type": head.type},
	}
}
