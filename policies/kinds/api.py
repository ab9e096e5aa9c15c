"""Where each kind the library knows lives in the Kubernetes API: group, version, plural, scope.

Every gate that talks to a cluster needs this table: the audit lists these kinds, the webhook's
inventory cache watches some of them, and the webhook's deployment grants read access to exactly
those. Keeping it in one place means a rule area that starts reading a new kind adds one line here
and every gate (and the least-privilege ClusterRoles generated from it) follows.

Custom resources (Cilium, Calico, AdminNetworkPolicy, PolicyReport) are listed with the version
stockade reads; a cluster that does not serve them answers 404, which the audit records as "not
installed" rather than as a coverage gap.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, cast

#: How a pod spec is held (docs/architecture.md, "Contracts": input.pod):
#: - "template": a corev1.PodTemplateSpec (``metadata`` + ``spec``), the pod's labels in its metadata;
#: - "spec": a corev1.PodSpec; the pods carry the object's own labels (Kubeflow Notebook);
#: - "component": PodSpec fields inline beside ``labels``/``annotations`` that the controller adds to
#:   the object's own (KServe's predictor/transformer/explainer and ServingRuntime specs);
#: - "spark": a spark-operator SparkPodSpec (``spec.driver``, ``spec.executor``), from which
#:   spark-submit and the operator's webhook build the pod (``stockade.policies.kinds.spark``);
#: - "ray-submitter": a RayJob's submitterPodTemplate, or, where it has none and submits from a Job
#:   (K8sJobMode, the default), the submitter pod KubeRay builds (``stockade.policies.kinds.ray``);
#: - "argo": an Argo Workflows template (``spec.templates[*]``) that runs containers, from which with
#:   the workflow spec around it the controller builds one pod (``stockade.policies.kinds.argo``);
#: - "object": a whole object of another kind that a controller creates, whose pods are this
#:   object's (a Katib Experiment's ``trialTemplate.trialSpec``: the Job each trial runs).
PodForm = Literal["template", "spec", "component", "spark", "ray-submitter", "argo", "object"]

#: One segment of a pod path: a field name, or ``*`` for every item of a list / value of a map.
WILDCARD = "*"


#: Who decides the ServiceAccount the pods of a pod spec run as (docs/architecture.md, input.pod.account):
#: - "pod": the pod spec's own serviceAccountName (else "default"), as Kubernetes does;
#: - "inherited": the pod spec has no such field (KServe's ServingRuntime): the object that uses it
#:   decides (the InferenceService's predictor), and is judged for it;
#: - "operator": an operator sets it when a field of the object is true (KubeRay's head with
#:   enableInTreeAutoscaling), and binds its own Role to that account: the pods are API clients.
AccountSource = Literal["pod", "inherited", "operator"]

#: The account name an operator gives when the pod spec names none: "object", the object's name;
#: "generated", a name the operator generates (not known before it runs).
OperatorName = Literal["", "object", "generated"]


class Account(NamedTuple):
    """The ServiceAccount semantics of one pod spec (see :data:`AccountSource`)."""

    source: AccountSource = "pod"
    by: str = ""  # who decides: the inheriting object's kind, or the operator
    when: tuple[str, ...] = ()  # operator: the boolean field of the object that must be true
    name: OperatorName = ""  # operator: the account it names when the pod spec names none
    api_client: bool = False  # "pod": the pods call the API by design (a Spark driver creates its executors)


OWN_ACCOUNT = Account()


class PodPath(NamedTuple):
    """Where pod specs sit in objects of one kind: a field path, ``*`` standing for each item."""

    path: tuple[str, ...]
    form: PodForm = "template"
    account: Account = OWN_ACCOUNT

    def text(self) -> str:
        return ".".join(self.path).replace(".*", "[*]")


_FIELD = r"[A-Za-z_$][A-Za-z0-9_$-]*"
_POD_PATH_RE = re.compile(rf"^(?:{_FIELD}|\*)(?:\.(?:{_FIELD}|\*)|\[\*\])*$")


def pod_path(text: str, form: PodForm = "template", account: Account = OWN_ACCOUNT) -> PodPath:
    """``spec.workerGroupSpecs[*].template`` (or ``spec.replicaSpecs.*.template``) -> a PodPath."""
    if not _POD_PATH_RE.match(text):
        raise ValueError(f"{text!r} is not a field path such as spec.workers[*].template")
    return PodPath(
        tuple(WILDCARD if t == "[*]" else t for t in re.findall(r"\[\*\]|[^.\[\]]+", text)), form, account
    )


#: The rule-kind alias of the objects of custom resources that no rule names by kind and no kinds
#: table entry holds (a TrainJob, an Argo CD Application, a Flux HelmRelease): rules that read any
#: object's text (plaintext credentials) cover them under it. An API server sends them to no webhook,
#: which cannot be registered for kinds it does not know: a scan judges them.
CUSTOM_ALIAS = "@custom"


def custom_resource(obj: Mapping[str, Any]) -> bool:
    """Whether an object is a custom resource's: its API group is a domain name and not one of
    Kubernetes' own (``*.k8s.io``; the ``*.x-k8s.io`` groups of SIG projects are CRDs)."""
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str) or "/" not in api_version:
        return False
    group = api_version.rsplit("/", 1)[0]
    return "." in group and (not group.endswith(".k8s.io") or group.endswith(".x-k8s.io"))


def field_at(value: Any, path: Sequence[str | int]) -> Any:
    """The value at ``path`` in a decoded object (keys of mappings, indexes of lists), None where the
    path leads nowhere."""
    for key in path:
        if isinstance(key, int) and isinstance(value, list) and 0 <= key < len(value):
            value = value[key]
        elif isinstance(key, str) and isinstance(value, Mapping):
            value = value.get(key)
        else:
            return None
    return value


class KindInfo(NamedTuple):
    """One kind's REST coordinates, and where its objects hold pod specs (workload kinds)."""

    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    custom: bool = False  # served only when a CRD is installed; 404 means "not installed"
    pods: tuple[PodPath, ...] = ()  # pod specs inside objects of this kind (workload kinds)
    high_risk: bool = False  # its pods run untrusted code by nature (agent sandboxes): must be sandboxed
    runs_pods: bool = True  # False for templates other objects instantiate (PodTemplate, TrainingRuntime)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def list_path(self) -> str:
        """The all-namespaces collection path, e.g. ``/apis/apps/v1/deployments``."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{base}/{self.plural}"


_T = pod_path  # a PodTemplateSpec path


def _ray(prefix: str, cluster_name: OperatorName = "generated") -> tuple[PodPath, ...]:
    """A RayClusterSpec's pods (ray-operator/apis/ray/v1 raycluster_types.go): the head and each worker
    group hold a corev1.PodTemplateSpec. With ``enableInTreeAutoscaling: true`` KubeRay sets the head
    pod's serviceAccountName (controllers/ray/common/pod.go DefaultHeadPodTemplate) to the head
    template's own, else the RayCluster's name (utils.GetHeadGroupServiceAccountName, clipped by
    utils.CheckName), creates that account unless the template names one, and binds the autoscaler's
    Role to it (raycluster_controller.go reconcileAutoscaler*). A RayCluster's name is its object's;
    RayJob and RayService create clusters under generated names."""
    head = Account("operator", "KubeRay", (*prefix.split("."), "enableInTreeAutoscaling"), cluster_name)
    return (
        _T(f"{prefix}.headGroupSpec.template", account=head),
        _T(f"{prefix}.workerGroupSpecs[*].template"),
    )


def _spark(prefix: str) -> tuple[PodPath, ...]:
    """A SparkApplicationSpec's two roles, each a SparkPodSpec (``stockade.policies.kinds.spark``):
    the driver creates and watches its executors through the API."""
    return (
        pod_path(f"{prefix}.driver", "spark", Account(api_client=True)),
        pod_path(f"{prefix}.executor", "spark"),
    )


def _kubeflow(kind: str, field: str, version: str = "v1") -> KindInfo:
    """A Kubeflow training job: ``map[ReplicaType]*ReplicaSpec``, each with a PodTemplateSpec."""
    return KindInfo(
        "kubeflow.org", version, kind.lower() + "s", kind, True, True, (_T(f"spec.{field}.*.template"),)
    )


_KSERVE_RUNTIME_ACCOUNT = Account("inherited", "InferenceService")

_JOBSET_PODS = (
    "replicatedJobs[*].template.spec.template"  # JobSetSpec: ReplicatedJob.Template is a JobTemplateSpec
)

#: Custom resources whose objects hold the pods of AI workloads, read from each project's API types
#: (the source of every path is in the README's "Workload kinds"). A kind may hold several pod specs
#: (a Ray head and worker groups); each is one evaluation of the pod rules.
WORKLOAD_CUSTOM_KINDS: tuple[KindInfo, ...] = (
    # ray-project/kuberay ray-operator/apis/ray/v1
    KindInfo("ray.io", "v1", "rayclusters", "RayCluster", True, True, _ray("spec", "object")),
    KindInfo(
        "ray.io",
        "v1",
        "rayjobs",
        "RayJob",
        True,
        True,
        (*_ray("spec.rayClusterSpec"), pod_path("spec.submitterPodTemplate", "ray-submitter")),
    ),
    KindInfo("ray.io", "v1", "rayservices", "RayService", True, True, _ray("spec.rayClusterConfig")),
    KindInfo(
        "ray.io",
        "v1",
        "raycronjobs",
        "RayCronJob",
        True,
        True,
        (
            *_ray("spec.jobTemplate.rayClusterSpec"),
            pod_path("spec.jobTemplate.submitterPodTemplate", "ray-submitter"),
        ),
    ),
    # kubeflow/training-operator pkg/apis/kubeflow.org/v1 (MPIJob: kubeflow/mpi-operator v2beta1)
    _kubeflow("PyTorchJob", "pytorchReplicaSpecs"),
    _kubeflow("TFJob", "tfReplicaSpecs"),
    _kubeflow("MPIJob", "mpiReplicaSpecs", "v2beta1"),
    _kubeflow("XGBoostJob", "xgbReplicaSpecs"),
    _kubeflow("PaddleJob", "paddleReplicaSpecs"),
    _kubeflow("JAXJob", "jaxReplicaSpecs"),
    _kubeflow("MXJob", "mxReplicaSpecs"),
    # kubeflow/trainer: spec.template is a JobSetTemplateSpec
    KindInfo(
        "trainer.kubeflow.org",
        "v1alpha1",
        "trainingruntimes",
        "TrainingRuntime",
        True,
        True,
        (_T(f"spec.template.spec.{_JOBSET_PODS}"),),
    ),
    KindInfo(
        "trainer.kubeflow.org",
        "v1alpha1",
        "clustertrainingruntimes",
        "ClusterTrainingRuntime",
        False,
        True,
        (_T(f"spec.template.spec.{_JOBSET_PODS}"),),
    ),
    # kubernetes-sigs/jobset, kubernetes-sigs/lws
    KindInfo("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", True, True, (_T(f"spec.{_JOBSET_PODS}"),)),
    KindInfo(
        "leaderworkerset.x-k8s.io",
        "v1",
        "leaderworkersets",
        "LeaderWorkerSet",
        True,
        True,
        (_T("spec.leaderWorkerTemplate.leaderTemplate"), _T("spec.leaderWorkerTemplate.workerTemplate")),
    ),
    KindInfo(
        "disaggregatedset.x-k8s.io",
        "v1",
        "disaggregatedsets",
        "DisaggregatedSet",
        True,
        True,
        (
            _T("spec.roles[*].spec.leaderWorkerTemplate.leaderTemplate"),
            _T("spec.roles[*].spec.leaderWorkerTemplate.workerTemplate"),
        ),
    ),
    # volcano-sh/apis: Volcano's Job and CronJob share their kind names with batch/v1's, so they are
    # keyed "Job.batch.volcano.sh" (object_kind gives the kind the objects carry)
    KindInfo(
        "batch.volcano.sh",
        "v1alpha1",
        "jobs",
        "Job.batch.volcano.sh",
        True,
        True,
        (_T("spec.tasks[*].template"),),
    ),
    KindInfo(
        "batch.volcano.sh",
        "v1alpha1",
        "cronjobs",
        "CronJob.batch.volcano.sh",
        True,
        True,
        (_T("spec.jobTemplate.spec.tasks[*].template"),),
    ),
    KindInfo(
        "flow.volcano.sh",
        "v1alpha1",
        "jobtemplates",
        "JobTemplate",
        True,
        True,
        (_T("spec.tasks[*].template"),),
    ),
    # kserve/kserve pkg/apis/serving: components inline PodSpec fields beside their labels/annotations
    KindInfo(
        "serving.kserve.io",
        "v1beta1",
        "inferenceservices",
        "InferenceService",
        True,
        True,
        tuple(
            pod_path(p, "component")
            for c in ("predictor", "transformer", "explainer")
            for p in (f"spec.{c}", f"spec.{c}.workerSpec")
        ),
    ),
    # ServingRuntimePodSpec (pkg/apis/serving/v1alpha1/servingruntime_types.go) has no
    # serviceAccountName nor automountServiceAccountToken: the InferenceService's predictor decides
    *(
        KindInfo(
            "serving.kserve.io",
            "v1alpha1",
            kind.lower() + "s",
            kind,
            kind == "ServingRuntime",
            True,
            tuple(pod_path(p, "component", _KSERVE_RUNTIME_ACCOUNT) for p in ("spec", "spec.workerSpec")),
        )
        for kind in ("ServingRuntime", "ClusterServingRuntime")
    ),
    KindInfo(
        "serving.kserve.io",
        "v1alpha1",
        "llminferenceservices",
        "LLMInferenceService",
        True,
        True,
        tuple(
            pod_path(p, "spec")
            for p in (
                "spec.template",
                "spec.worker",
                "spec.prefill.template",
                "spec.prefill.worker",
                "spec.router.scheduler.template",
            )
        ),
    ),
    # kubeflow/kubeflow notebook-controller: NotebookTemplateSpec holds only a PodSpec
    KindInfo(
        "kubeflow.org", "v1", "notebooks", "Notebook", True, True, (pod_path("spec.template.spec", "spec"),)
    ),
    # operator-framework OLM: a ClusterServiceVersion holds its operator's Deployments
    # (StrategyDetailsDeployment, api/pkg/operators/v1alpha1/clusterserviceversion_types.go); OLM
    # creates them in the CSV's namespace and binds the CSV's permissions and clusterPermissions to
    # their accounts: operators, API clients
    KindInfo(
        "operators.coreos.com",
        "v1alpha1",
        "clusterserviceversions",
        "ClusterServiceVersion",
        True,
        True,
        (_T("spec.install.spec.deployments[*].spec.template", account=Account(api_client=True)),),
    ),
    # kubernetes-sigs/agent-sandbox: a PodTemplate (labels, annotations, spec); untrusted code by nature
    KindInfo(
        "agents.x-k8s.io", "v1beta1", "sandboxes", "Sandbox", True, True, (_T("spec.podTemplate"),), True
    ),
    KindInfo(
        "extensions.agents.x-k8s.io",
        "v1beta1",
        "sandboxtemplates",
        "SandboxTemplate",
        True,
        True,
        (_T("spec.podTemplate"),),
        True,
    ),
    # argoproj/argo-rollouts
    KindInfo("argoproj.io", "v1alpha1", "rollouts", "Rollout", True, True, (_T("spec.template"),)),
    KindInfo(
        "argoproj.io",
        "v1alpha1",
        "experiments",
        "Experiment",
        True,
        True,
        (_T("spec.templates[*].template"),),
    ),
    *(
        KindInfo(
            "argoproj.io",
            "v1alpha1",
            kind.lower() + "s",
            kind,
            kind != "ClusterAnalysisTemplate",
            True,
            (_T("spec.metrics[*].provider.job.spec.template"),),
        )
        for kind in ("AnalysisTemplate", "ClusterAnalysisTemplate", "AnalysisRun")
    ),
    # kubeflow/katib pkg/apis/controller/experiments/v1beta1: the trial controller creates the
    # trialSpec (a Job, a PyTorchJob, ... with `${trialParameters.x}` filled in) for each trial
    KindInfo(
        "kubeflow.org",
        "v1beta1",
        "experiments",
        "Experiment.kubeflow.org",  # Argo Rollouts' Experiment shares the kind's name
        True,
        True,
        (pod_path("spec.trialTemplate.trialSpec", "object"),),
    ),
    # argoproj/argo-workflows pkg/apis/workflow/v1alpha1: each template that runs containers is a
    # pod (workflow/controller/workflowpod.go); the executor uses the pod's account: API clients
    *(
        KindInfo(
            "argoproj.io",
            "v1alpha1",
            kind.lower() + "s",
            kind,
            kind != "ClusterWorkflowTemplate",
            True,
            tuple(
                pod_path(f"{prefix}.{templates}", "argo", Account(api_client=True))
                # a template, and one written inline in a step or a DAG task (Template.Inline)
                for templates in (
                    "templates[*]",
                    "templates[*].steps[*][*].inline",
                    "templates[*].dag.tasks[*].inline",
                )
            ),
        )
        for kind, prefix in (
            ("Workflow", "spec"),
            ("WorkflowTemplate", "spec"),
            ("ClusterWorkflowTemplate", "spec"),
            ("CronWorkflow", "spec.workflowSpec"),
        )
    ),
    # kubeflow/spark-operator v1beta2 (v1beta1 alike): the driver and executor pods it builds
    KindInfo(
        "sparkoperator.k8s.io",
        "v1beta2",
        "sparkapplications",
        "SparkApplication",
        True,
        True,
        _spark("spec"),
    ),
    KindInfo(
        "sparkoperator.k8s.io",
        "v1beta2",
        "scheduledsparkapplications",
        "ScheduledSparkApplication",
        True,
        True,
        _spark("spec.template"),
    ),
    # knative/serving: RevisionTemplateSpec (metadata + a RevisionSpec that inlines PodSpec)
    KindInfo(
        "serving.knative.dev",
        "v1",
        "services",
        "Service.serving.knative.dev",
        True,
        True,
        (_T("spec.template"),),
    ),
    KindInfo(
        "serving.knative.dev", "v1", "configurations", "Configuration", True, True, (_T("spec.template"),)
    ),
    KindInfo("serving.knative.dev", "v1", "revisions", "Revision", True, True, (pod_path("spec", "spec"),)),
)
#: Templates other objects instantiate: judged by the pod rules (their pods will run so), but no pod
#: runs as them (egress reachability leaves them out).
_TEMPLATE_KINDS = frozenset(
    {
        "TrainingRuntime",
        "ClusterTrainingRuntime",
        "JobTemplate",
        "ServingRuntime",
        "ClusterServingRuntime",
        "SandboxTemplate",
        "AnalysisTemplate",
        "ClusterAnalysisTemplate",
        "WorkflowTemplate",
        "ClusterWorkflowTemplate",
        "Experiment.kubeflow.org",
    }
)
WORKLOAD_CUSTOM_KINDS = tuple(
    k._replace(runs_pods=k.kind not in _TEMPLATE_KINDS) for k in WORKLOAD_CUSTOM_KINDS
)


_ALL = (
    KindInfo("", "v1", "namespaces", "Namespace", False),
    KindInfo("", "v1", "nodes", "Node", False),
    KindInfo("", "v1", "pods", "Pod", True, pods=(PodPath(()),)),
    KindInfo("", "v1", "podtemplates", "PodTemplate", True, pods=(_T("template"),), runs_pods=False),
    KindInfo("", "v1", "replicationcontrollers", "ReplicationController", True, pods=(_T("spec.template"),)),
    KindInfo("", "v1", "serviceaccounts", "ServiceAccount", True),
    KindInfo("", "v1", "services", "Service", True),
    KindInfo("", "v1", "configmaps", "ConfigMap", True),
    KindInfo("", "v1", "secrets", "Secret", True),
    KindInfo("", "v1", "persistentvolumes", "PersistentVolume", False),
    KindInfo("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True),
    KindInfo("apps", "v1", "deployments", "Deployment", True, pods=(_T("spec.template"),)),
    KindInfo("apps", "v1", "replicasets", "ReplicaSet", True, pods=(_T("spec.template"),)),
    KindInfo("apps", "v1", "statefulsets", "StatefulSet", True, pods=(_T("spec.template"),)),
    KindInfo("apps", "v1", "daemonsets", "DaemonSet", True, pods=(_T("spec.template"),)),
    KindInfo("batch", "v1", "jobs", "Job", True, pods=(_T("spec.template"),)),
    KindInfo("batch", "v1", "cronjobs", "CronJob", True, pods=(_T("spec.jobTemplate.spec.template"),)),
    KindInfo("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True),
    KindInfo("networking.k8s.io", "v1", "ingresses", "Ingress", True),
    KindInfo("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False),
    KindInfo("storage.k8s.io", "v1", "storageclasses", "StorageClass", False),
    KindInfo("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    KindInfo("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    KindInfo("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    KindInfo("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    KindInfo(
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        False,
    ),
    KindInfo(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        False,
    ),
    KindInfo("apiregistration.k8s.io", "v1", "apiservices", "APIService", False),
    KindInfo("cilium.io", "v2", "ciliumnetworkpolicies", "CiliumNetworkPolicy", True, True),
    KindInfo(
        "cilium.io", "v2", "ciliumclusterwidenetworkpolicies", "CiliumClusterwideNetworkPolicy", False, True
    ),
    KindInfo("projectcalico.org", "v3", "networkpolicies", "NetworkPolicy.projectcalico.org", True, True),
    KindInfo("projectcalico.org", "v3", "globalnetworkpolicies", "GlobalNetworkPolicy", False, True),
    KindInfo("projectcalico.org", "v3", "tiers", "Tier", False, True),
    KindInfo(
        "policy.networking.k8s.io", "v1alpha1", "adminnetworkpolicies", "AdminNetworkPolicy", False, True
    ),
    KindInfo(
        "policy.networking.k8s.io",
        "v1alpha1",
        "baselineadminnetworkpolicies",
        "BaselineAdminNetworkPolicy",
        False,
        True,
    ),
    *WORKLOAD_CUSTOM_KINDS,
    # KubeVirt (kubevirt.io/api core/v1, pool/v1alpha1): virtual machines run in virt-launcher pods, so
    # they are peers of a reachability analysis; their specs are not pod specs (no pod rules)
    KindInfo("kubevirt.io", "v1", "virtualmachines", "VirtualMachine", True, True),
    KindInfo("kubevirt.io", "v1", "virtualmachineinstances", "VirtualMachineInstance", True, True),
    KindInfo(
        "kubevirt.io",
        "v1",
        "virtualmachineinstancereplicasets",
        "VirtualMachineInstanceReplicaSet",
        True,
        True,
    ),
    KindInfo("pool.kubevirt.io", "v1alpha1", "virtualmachinepools", "VirtualMachinePool", True, True),
)

#: kind -> where it lives. Calico's namespaced NetworkPolicy shares its kind name with the core one,
#: so it is keyed by ``Kind.group``; everything else by its kind.
KINDS: dict[str, KindInfo] = {k.kind: k for k in _ALL}


def kind_info(kind: str) -> KindInfo | None:
    return KINDS.get(kind)


def object_kind(info: KindInfo) -> str:
    """The `kind` field objects of this collection carry (Calico's NetworkPolicy is plain `NetworkPolicy`)."""
    return info.kind.split(".", 1)[0]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def list_call(api_client: Any, info: KindInfo) -> Callable[..., Any]:
    """The `kubernetes` client's generated list method for a kind, across all namespaces.

    The generated methods (rather than a hand-built request) carry authentication, token refresh,
    TLS and proxy settings, and accept ``limit``, ``_continue``, ``_preload_content=False`` (the raw
    response, no model classes) and ``_request_timeout`` in every client version pyproject allows.
    Non-core groups go through ``CustomObjectsApi.list_cluster_custom_object``, which is the plain
    ``/apis/{group}/{version}/{plural}`` collection for built-in kinds too.
    """
    from kubernetes import client as k8s_client

    if info.group:
        api = k8s_client.CustomObjectsApi(api_client)
        return functools.partial(api.list_cluster_custom_object, info.group, info.version, info.plural)
    if info.version != "v1":
        raise ValueError(f"core kinds are v1, not {info.version} ({info.kind})")
    name = f"list_{_snake(info.kind)}" + ("_for_all_namespaces" if info.namespaced else "")
    method = getattr(k8s_client.CoreV1Api(api_client), name, None)
    if not callable(method):
        raise ValueError(f"the kubernetes client has no CoreV1Api.{name} for {info.kind}")
    return cast(Callable[..., Any], method)


def info_for(api_version: str, kind: str) -> KindInfo | None:
    """The table's entry for an apiVersion and kind (a VAP's ``paramKind``); None when not in the table."""
    group, _, version = api_version.rpartition("/")
    info = KINDS.get(kind)
    if info is not None and info.group == group and info.version == version:
        return info
    return None


def discover(api_client: Any, api_version: str, kind: str, timeout: float = 30.0) -> KindInfo | None:
    """A kind's REST coordinates from the API server's discovery document (``GET /apis/{group}/
    {version}``), for kinds the table does not hold (a CRD used as a VAP's params): None when the
    group-version does not serve the kind; the client's ApiException (404: not installed) otherwise."""
    import orjson

    call, _ = discovery_call(api_client, api_version)
    response = call(_preload_content=False, _request_timeout=timeout)
    return kind_in_discovery(orjson.loads(response.data), api_version, kind)


def discovery_call(api_client: Any, api_version: str) -> tuple[Callable[..., Any], str]:
    """The `kubernetes` client's discovery method for a group-version, and its path."""
    from kubernetes import client as k8s_client

    group, _, version = api_version.rpartition("/")
    if group:
        api = k8s_client.CustomObjectsApi(api_client)
        return functools.partial(api.get_api_resources, group, version), f"/apis/{group}/{version}"
    return k8s_client.CoreV1Api(api_client).get_api_resources, f"/api/{version}"


def kind_in_discovery(document: Any, api_version: str, kind: str) -> KindInfo | None:
    """A kind's entry in a discovery document (an APIResourceList), subresources aside."""
    group, _, version = api_version.rpartition("/")
    resources = document.get("resources") if isinstance(document, dict) else None
    for resource in resources if isinstance(resources, list) else ():
        name = str(resource.get("name") or "") if isinstance(resource, dict) else ""
        if resource.get("kind") == kind and name and "/" not in name:
            return KindInfo(group, version, name, kind, bool(resource.get("namespaced")), custom=bool(group))
    return None


def guess_plural(kind: str) -> str:
    """The plural CRD tooling derives from a kind (kubebuilder's default), where RBAC must name a
    resource before any discovery can answer (the deployment's and the audit's ClusterRoles)."""
    word = kind.lower()
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    return word + "s"
