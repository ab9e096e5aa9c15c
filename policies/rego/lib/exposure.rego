# Interfaces of AI tooling that have no authentication of their own (or none by default), and how a
# Service, an Ingress or a Ray cluster exposes them. exposure.sensitive_ports replaces the defaults.
package stockade.lib.exposure

import rego.v1

default_sensitive_ports := [
	{"what": "Ray dashboard and Jobs API", "port": 8265, "names": ["dashboard"]},
	{"what": "Ray client", "port": 10001, "names": ["client", "ray-client"]},
	{"what": "Ray GCS", "port": 6379, "names": ["gcs", "gcs-server", "redis"]},
	{"what": "Ray dashboard agent", "port": 52365, "names": ["dashboard-agent"]},
	{"what": "Jupyter", "port": 8888, "names": ["jupyter", "notebook", "notebook-port"]},
	{"what": "TensorBoard", "port": 6006, "names": ["tensorboard"]},
	{"what": "MLflow", "port": 5000, "names": ["mlflow"]},
	{"what": "Spark UI", "port": 4040, "names": ["spark-ui"]},
	{"what": "Dask scheduler", "port": 8786, "names": ["dask-scheduler"]},
	{"what": "Dask dashboard", "port": 8787, "names": ["dask-dashboard"]},
	{"what": "Gradio", "port": 7860, "names": ["gradio"]},
	{"what": "Streamlit", "port": 8501, "names": ["streamlit"]},
	{"what": "Ollama", "port": 11434, "names": ["ollama"]},
	{"what": "Argo Workflows server", "port": 2746, "names": ["argo-server"]},
]

sensitive_ports := object.get(data.stockade.config, ["exposure", "sensitive_ports"], default_sensitive_ports)

# What a Service port, or an Ingress backend port, is: by number (port or targetPort) or by name.
interfaces(p) := {entry.what |
	some entry in sensitive_ports
	matches(entry, p)
}

# Only by name: where the pods behind a Service are known, a port's number alone (8888, 5000 are
# every other web server's too) does not say what answers on it; their images do.
named_interfaces(p) := {entry.what |
	some entry in sensitive_ports
	named(entry, p)
}

matches(entry, p) if p.port == entry.port

matches(entry, p) if p.targetPort == entry.port

matches(entry, p) if named(entry, p)

named(entry, p) if {
	is_string(p.name)
	lower(p.name) in {lower(n) | some n in object.get(entry, "names", [])}
}

named(entry, p) if {
	is_string(p.targetPort)
	lower(p.targetPort) in {lower(n) | some n in object.get(entry, "names", [])}
}

# Annotations by which an ingress controller authenticates requests before they reach the backend.
default_ingress_auth_annotations := [
	"nginx.ingress.kubernetes.io/auth-url",
	"nginx.ingress.kubernetes.io/auth-type",
	"nginx.ingress.kubernetes.io/auth-tls-verify-client",
	"alb.ingress.kubernetes.io/auth-type",
	"traefik.ingress.kubernetes.io/router.middlewares",
	"haproxy-ingress.github.io/auth-url",
	"haproxy-ingress.github.io/auth-type",
	"konghq.com/plugins",
]

ingress_auth_annotations := object.get(data.stockade.config, ["exposure", "ingress_auth_annotations"], default_ingress_auth_annotations)

# Annotations (key, value) that make a LoadBalancer Service internal, per cloud.
internal_load_balancer := {
	["service.beta.kubernetes.io/azure-load-balancer-internal", "true"],
	["service.beta.kubernetes.io/aws-load-balancer-internal", "true"],
	["service.beta.kubernetes.io/aws-load-balancer-scheme", "internal"],
	["networking.gke.io/load-balancer-type", "internal"],
	["cloud.google.com/load-balancer-type", "internal"],
	["service.beta.kubernetes.io/oci-load-balancer-internal", "true"],
}

# Images of interfaces without authentication of their own (or none by default), for Services whose
# ports do not tell (C-0021 in Kubescape recognises them this way too). Globs over the whole image
# reference.
default_sensitive_images := [
	{"what": "Ray", "images": ["rayproject/ray*", "*/rayproject/ray*", "anyscale/ray*", "*/anyscale/ray*"]},
	{"what": "Jupyter", "images": ["jupyter/*", "*/jupyter/*", "kubeflownotebookswg/jupyter*", "*/kubeflownotebookswg/jupyter*"]},
	{"what": "TensorBoard", "images": ["*tensorboard*"]},
	{"what": "MLflow", "images": ["*mlflow*"]},
	{"what": "Argo Workflows server", "images": ["argoproj/argocli*", "*/argoproj/argocli*"]},
	{"what": "vLLM OpenAI-compatible server", "images": ["vllm/vllm-openai*", "*/vllm/vllm-openai*"]},
	{"what": "Ollama", "images": ["ollama/ollama*", "*/ollama/ollama*"]},
	# creates RayClusters and RayJobs for whoever calls it (KubeRay's apiserver/deploy/base/insecure);
	# its secure deployment puts kuberay/security-proxy in the pod, which requires a token
	{"what": "KubeRay API server", "images": ["kuberay/apiserver*", "*/kuberay/apiserver*"], "unless": ["kuberay/security-proxy*", "*/kuberay/security-proxy*"]},
]

sensitive_images := object.get(data.stockade.config, ["exposure", "sensitive_images"], default_sensitive_images)

# The interfaces an image of the pods behind a Service answers as; not one whose authenticating proxy
# (its entry's `unless` images) runs in those pods too (`images`: all their images).
image_interfaces(image, images) := {entry.what |
	some entry in sensitive_images
	some pattern in entry.images
	glob.match(pattern, null, image)
	not proxied(entry, images)
}

proxied(entry, images) if {
	some pattern in object.get(entry, "unless", [])
	some other in images
	glob.match(pattern, null, other)
}
