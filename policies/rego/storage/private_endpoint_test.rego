package stockade.storage.private_endpoint_test

import data.stockade.storage.private_endpoint
import rego.v1

sc(provisioner, params) := {"kind": "StorageClass", "provisioner": provisioner, "parameters": params}

deny(obj) := d if {
	d := private_endpoint.deny with input as {"object": obj}
}

test_private_endpoint_allowed if {
	count(deny(sc("blob.csi.azure.com", {"networkEndpointType": "privateEndpoint"}))) == 0
	count(deny(sc("file.csi.azure.com", {"networkEndpointType": "privateEndpoint"}))) == 0
}

test_keys_and_values_are_case_insensitive if {
	count(deny(sc("blob.csi.azure.com", {"NetworkEndpointType": "privateendpoint"}))) == 0
	count(deny(sc("file.csi.azure.com", {"networkendpointtype": "PrivateEndpoint"}))) == 0
}

test_missing_parameter_denied if {
	some v in deny(sc("blob.csi.azure.com", {"skuName": "Premium_LRS"}))
	v.path == ["parameters"]
	contains(v.msg, "blob.csi.azure.com does not set networkEndpointType")
	some w in deny({"kind": "StorageClass", "provisioner": "file.csi.azure.com"})
	w.path == ["parameters"]
}

test_other_value_denied_at_its_key if {
	some v in deny(sc("file.csi.azure.com", {"NetworkEndpointType": "serviceEndpoint"}))
	v.path == ["parameters", "NetworkEndpointType"]
	contains(v.msg, "serviceEndpoint instead of privateEndpoint")
}

test_other_provisioners_ignored if {
	count(deny(sc("disk.csi.azure.com", {}))) == 0
	count(deny(sc("kubernetes.io/azure-file", {}))) == 0
}

test_configured_drivers if {
	count(deny(sc("blob.csi.azure.com", {}))) == 0 with data.stockade.config.storage.csi_drivers as ["x.csi"]
	count(deny(sc("x.csi", {}))) == 1 with data.stockade.config.storage.csi_drivers as ["x.csi"]
}
