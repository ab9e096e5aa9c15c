package stockade.exposure.sensitive_interface_test

import data.stockade.exposure.sensitive_interface
import rego.v1

deny(obj) := d if {
	d := sensitive_interface.deny with input as {"object": obj} with data.stockade.config as {}
}

svc(type, ports) := {"kind": "Service", "metadata": {"name": "ray-head"}, "spec": {"type": type, "ports": ports}}

test_load_balancer_dashboard_denied if {
	vs := deny(svc("LoadBalancer", [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "dashboard", "port": 8265}]))
	count(vs) == 1
	some v in vs
	v.path == ["spec", "ports", 1]
	v.msg == "LoadBalancer Service exposes the Ray dashboard and Jobs API (port 8265) outside the cluster, and it has no authentication of its own"
}

test_node_port_by_target_port_and_name if {
	count(deny(svc("NodePort", [{"port": 80, "targetPort": 8888}]))) == 1
	count(deny(svc("NodePort", [{"port": 80, "targetPort": "tensorboard"}]))) == 1
	count(deny(svc("NodePort", [{"port": 443, "name": "Jupyter"}]))) == 1
}

test_cluster_ip_allowed if {
	count(deny(svc("ClusterIP", [{"name": "dashboard", "port": 8265}]))) == 0
	count(deny({"kind": "Service", "spec": {"ports": [{"port": 8265}]}})) == 0
	count(deny(svc("LoadBalancer", [{"name": "https", "port": 443}]))) == 0
}

ingress(annotations, port) := {
	"kind": "Ingress",
	"metadata": {"name": "ray", "annotations": annotations},
	"spec": {"rules": [{"http": {"paths": [{"path": "/", "backend": {"service": {"name": "ray-head", "port": port}}}]}}]},
}

test_ingress_without_auth_denied if {
	vs := deny(ingress({}, {"number": 8265}))
	some v in vs
	v.path == ["spec", "rules", 0, "http", "paths", 0, "backend", "service"]
	count(deny(ingress({}, {"name": "dashboard"}))) == 1
	count(deny(ingress({}, {"number": 443}))) == 0
}

test_ingress_with_auth_allowed if {
	count(deny(ingress({"nginx.ingress.kubernetes.io/auth-url": "https://oauth2-proxy/oauth2/auth"}, {"number": 8265}))) == 0
	# an empty value authenticates nothing
	count(deny(ingress({"nginx.ingress.kubernetes.io/auth-url": ""}, {"number": 8265}))) == 1
}

test_ray_head_service_type_from_facts if {
	i := {"object": {"kind": "RayCluster"}, "pod": {"spec": {}}, "facts": {"exposure": {"rayHead": [{"path": ["spec", "headGroupSpec", "serviceType"], "type": "LoadBalancer"}]}}}
	vs := sensitive_interface.deny with input as i with data.stockade.config as {}
	some v in vs
	v.path == ["spec", "headGroupSpec", "serviceType"]
}

test_configured_ports if {
	d := sensitive_interface.deny with input as {"object": svc("LoadBalancer", [{"port": 9999}])} with data.stockade.config as {"exposure": {"sensitive_ports": [{"what": "X", "port": 9999}]}}
	count(d) == 1
}

test_selected_images_when_no_port_tells if {
	i := {"object": svc("LoadBalancer", [{"name": "http", "port": 80, "targetPort": 9376}]), "facts": {"exposure": {"selectedImages": ["quay.io/argoproj/argocli:v3.5.0", "nginx:1.25"]}}}
	vs := sensitive_interface.deny with input as i with data.stockade.config as {}
	count(vs) == 1
	some v in vs
	v.path == ["spec", "type"]
	v.details.images == ["quay.io/argoproj/argocli:v3.5.0"]
	contains(v.msg, "Argo Workflows server")
}

test_selected_images_not_reported_twice_or_for_cluster_ip if {
	# a port already tells: one finding, on the port
	i := {"object": svc("LoadBalancer", [{"name": "dashboard", "port": 8265}]), "facts": {"exposure": {"selectedImages": ["rayproject/ray:2.9.0"]}}}
	vs := sensitive_interface.deny with input as i with data.stockade.config as {}
	{v.path | some v in vs} == {["spec", "ports", 0]}
	j := {"object": svc("ClusterIP", [{"port": 80}]), "facts": {"exposure": {"selectedImages": ["rayproject/ray:2.9.0"]}}}
	ws := sensitive_interface.deny with input as j with data.stockade.config as {}
	count(ws) == 0
}

# kuberay's apiserver: a NodePort on 8888 (its HTTP port, named "http") to pods running
# kuberay/apiserver. By number alone it was "the Jupyter"; the pods are known, and no Jupyter image
# is among them, so the port does not say Jupyter answers there: the image says the KubeRay API
# server does (it creates Ray clusters and jobs for any caller), unless KubeRay's security proxy
# runs in the pods (apiserver/deploy/base/secure: the Service targets the proxy, which wants a token).
test_a_port_number_alone_yields_to_the_known_pods if {
	ports := [{"name": "http", "port": 8888, "targetPort": 8888}, {"name": "rpc", "port": 8887}]
	known := {"object": svc("NodePort", ports), "facts": {"exposure": {"selectedImages": ["quay.io/kuberay/apiserver:v1.1.0"]}}}
	ks := sensitive_interface.deny with input as known with data.stockade.config as {}
	{[k.path, k.details.interfaces] | some k in ks} == {[["spec", "type"], ["KubeRay API server"]]}
	proxied := {"object": svc("NodePort", ports), "facts": {"exposure": {"selectedImages": ["kuberay/apiserver:nightly", "kuberay/security-proxy:nightly"]}}}
	count(sensitive_interface.deny) == 0 with input as proxied with data.stockade.config as {}
	# the pods unknown (the Service alone): the number is all there is
	alone := {"object": svc("NodePort", ports)}
	vs := sensitive_interface.deny with input as alone with data.stockade.config as {}
	{v.details.interfaces | some v in vs} == {["Jupyter"]}
	# a name still tells, pods known or not
	named := {"object": svc("NodePort", [{"name": "notebook", "port": 80, "targetPort": 8888}]), "facts": {"exposure": {"selectedImages": ["myacr.azurecr.io/team/lab:3"]}}}
	count(sensitive_interface.deny) == 1 with input as named with data.stockade.config as {}
	# and the images tell when the number does not: a Jupyter image behind 8888
	lab := {"object": svc("NodePort", ports), "facts": {"exposure": {"selectedImages": ["quay.io/jupyter/scipy-notebook:2024-05-27"]}}}
	ws := sensitive_interface.deny with input as lab with data.stockade.config as {}
	{[w.path, w.details.interfaces] | some w in ws} == {[["spec", "type"], ["Jupyter"]]}
}

ray_client_ingress(annotations) := {
	"apiVersion": "networking.k8s.io/v1",
	"kind": "Ingress",
	"metadata": {"name": "rayclient", "namespace": "ml", "annotations": annotations},
	"spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "ray-head", "port": {"number": 10001}}}}]}}]},
}

test_ingress_to_the_ray_client_passing_tls_through_is_mutual_tls if {
	count(sensitive_interface.deny) == 0 with input as {"object": ray_client_ingress({"nginx.ingress.kubernetes.io/ssl-passthrough": "true"}), "facts": {}}
}

test_ingress_to_the_ray_client_terminating_tls_is_denied if {
	count(sensitive_interface.deny) == 1 with input as {"object": ray_client_ingress({}), "facts": {}}
}
