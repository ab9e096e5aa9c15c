"""Network-policy analysis: the policies' semantics, and reachability between workloads and addresses.

`sets` (connection sets, IPv4 blocks), `topology` (workloads, namespaces, label selectors), one module
per policy API (`k8s` NetworkPolicy, `admin` AdminNetworkPolicy / BaselineAdminNetworkPolicy, `cilium`
CiliumNetworkPolicy / CiliumClusterwideNetworkPolicy, `calico` Calico NetworkPolicy /
GlobalNetworkPolicy), and `reach`, the connectivity of a whole set of objects in
np-guard/netpol-analyzer's terms. The per-object facts the egress rules read are in
:mod:`stockade.policies.facts.egress`.
"""
