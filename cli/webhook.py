"""`stockade webhook serve` is the admission gate; `manifests`, `certs`, `install`, `uninstall` deploy it."""

from __future__ import annotations

import datetime as dt
import logging
import ssl
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
import urllib3
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from starlette.applications import Starlette

from stockade.admission.app import JSONLogFormatter, WebhookState, create_app
from stockade.cli.errors import fail, writing
from stockade.cli.loading import (
    EngineName,
    EngineOption,
    OpaUrlOption,
    config_file,
    load_evaluator,
    remote_url,
)
from stockade.policies.config.settings import STARTER_CONFIG, Config, ConfigError, load_config, parse_config
from stockade.policies.engines.library import PolicyError, load_library
from stockade.policies.evaluate import InventoryFacts
from stockade.policies.facts import Inventory
from stockade.webhooks.certs import (
    SERVING_RENEW_BEFORE,
    ca_bundle,
    check_writable,
    ensure_certs,
    serving_dns_names,
)
from stockade.webhooks.helmchart import chart_files
from stockade.webhooks.install import (
    InstallError,
    install,
    install_objects,
    register,
    uninstall,
    uninstall_objects,
    unregister,
)
from stockade.webhooks.kinds import UnknownKind
from stockade.webhooks.manifests import (
    CA_BUNDLE_MAP,
    CA_INJECT_ANNOTATION,
    DEFAULT_NAMESPACE,
    REGISTRATION_DIR,
    ManifestError,
    Options,
    cert_manager_objects,
    covered_kinds,
    default_image,
    param_kinds,
    policy_files,
    render,
    service_dns_names,
    split_registration,
    to_documents,
    webhook_configuration,
    write_kustomize,
)
from stockade.webhooks.manifests import NAME as WEBHOOK

app = typer.Typer(rich_markup_mode=None, help="The validating admission webhook.", no_args_is_help=True)


def _logging() -> logging.Handler:
    """The JSON lines on stderr (the handler: each request's line is written to it directly)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONLogFormatter())
    root = logging.getLogger("stockade")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    # The JSON lines name no source line, thread or process name: none is gathered for every
    # request's log line (the logging HOWTO's "Optimization": logging._srcfile = None, logThreads,
    # logMultiprocessing). The process id stays: the lines carry it.
    logging._srcfile = None
    logging.logThreads = False
    logging.logMultiprocessing = False
    return handler


@app.command("serve")
def serve(
    tls_cert: Annotated[Path, typer.Option("--tls-cert", help="Serving certificate (PEM).")],
    tls_key: Annotated[Path, typer.Option("--tls-key", help="Its private key (PEM).")],
    port: Annotated[int, typer.Option("--port")] = 8443,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on. Default 0.0.0.0, every interface: in a pod the API server calls"
            " the pod IP. 127.0.0.1 keeps a local server to this machine.",
        ),
    ] = "0.0.0.0",
    workers: Annotated[int, typer.Option("--workers", help="Worker processes.")] = 1,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="stockade.yaml (hot-reloaded)")
    ] = None,
    policy_dir: Annotated[list[Path] | None, typer.Option("--policy-dir", help="Extra Rego rules.")] = None,
    no_inventory: Annotated[
        bool, typer.Option("--no-inventory", help="Run without a cluster (no namespace labels or facts).")
    ] = False,
    kubeconfig: Annotated[Path | None, typer.Option("--kubeconfig", help="Default: in-cluster.")] = None,
    context: Annotated[str | None, typer.Option("--context")] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            envvar="STOCKADE_CLUSTER",
            help="This cluster's name, as audits name it: its sandbox profile, overrides, exceptions.",
        ),
    ] = None,
    engine: EngineOption = EngineName.embedded,
    opa_url: OpaUrlOption = None,
    no_evaluation: Annotated[
        bool, typer.Option("--no-evaluation", hidden=True, help="Benchmark floor: allow without evaluating.")
    ] = False,
    self_issued_certs: Annotated[
        bool,
        typer.Option(
            "--self-issued-certs",
            help="Issue and rotate the serving certificate (CA in the Secret stockade-webhook-certs of"
            " POD_NAMESPACE, caBundle of the webhook configuration kept in step), written to"
            " --tls-cert/--tls-key. The Helm chart's default.",
        ),
    ] = False,
) -> None:
    """Serve AdmissionReview v1 on https://HOST:PORT/validate (plus /healthz, /readyz, /metrics).

    Every start-up failure (files, config, TLS pair, cluster configuration, port, a worker that cannot
    start) is one line and exit code 2."""
    stop_issuer: Callable[[], None] | None = None
    if self_issued_certs:
        stop_issuer = _self_issuer(tls_cert, tls_key, kubeconfig, context).start()
    for f in (tls_cert, tls_key):
        if not f.is_file():
            fail(f"{f}: no such file")
    if workers < 1:
        fail("--workers must be at least 1")
    _check_tls_pair(tls_cert, tls_key)
    remote = remote_url(engine, opa_url)
    config = config_file(config)
    # fail fast, in the parent, on a broken config or library
    parent, _ = load_evaluator(config, policy_dir or [], remote)
    params = parent.engine.library.vap.param_kinds()  # the cache lists and watches the VAPs' params
    dirs = tuple(policy_dir or ())
    if not no_inventory:
        # fail fast, in the parent, when there is no cluster to fill the inventory from
        _cluster_client(kubeconfig, context).close()

    def factory() -> Starlette:
        # Runs in each worker process, after the fork: the cache's threads must start here.
        handler = _logging()
        try:
            return _app(
                config,
                dirs,
                no_evaluation,
                cluster,
                remote,
                no_inventory,
                kubeconfig,
                context,
                params,
                log_handler=handler,
            )
        except _StartError as exc:
            # in a forked worker this is its exit code (no traceback); the parent then stops the server
            typer.echo(f"stockade: error: {exc}", err=True)
            raise SystemExit(2) from None

    from stockade.admission.server import Limits, bind
    from stockade.admission.server import serve as run

    limits = (load_config(config) if config else Config()).admission
    try:
        sock = bind(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    _logging()
    try:
        failed = run(sock, tls_cert, tls_key, factory, workers, Limits.of(limits))
    finally:
        if stop_issuer is not None:
            stop_issuer()
    if failed:
        fail(f"{failed} of {workers} worker processes ended on their own, so the server stopped")


def _self_issuer(tls_cert: Path, tls_key: Path, kubeconfig: Path | None, context: str | None) -> Any:
    """The certificate self-issuer, after its first pass: the Secret read (or filled), the caBundle
    in step, the pair written where the server reads it. Its loop runs in a thread of this process
    (with --workers, the parent's: the files are shared)."""
    from stockade.webhooks.selfcert import SelfCertError, SelfIssuer, pod_namespace

    namespace = pod_namespace()
    if namespace is None:
        fail("--self-issued-certs: set POD_NAMESPACE (the chart sets it) or run in a pod")
    try:
        Options(namespace=namespace).validate()
    except ManifestError as exc:
        fail(f"--self-issued-certs: {exc}")
    api_client = _cluster_client(kubeconfig, context)
    issuer = SelfIssuer(api_client, namespace, service_dns_names(namespace), tls_cert, tls_key)
    try:
        done = issuer.reconcile()
    except SelfCertError as exc:
        fail(f"--self-issued-certs: {exc}")
    except urllib3.exceptions.HTTPError as exc:
        host = api_client.configuration.host
        fail(f"--self-issued-certs: cannot reach the API server at {host}: {type(exc).__name__}")
    typer.echo(f"stockade: self-issued certificate: {done}", err=True)
    return issuer


class _StartError(Exception):
    """A worker could not build its app: one line."""


def _check_tls_pair(cert: Path, key: Path) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(str(cert), str(key))
    except ssl.SSLError as exc:
        fail(
            f"--tls-cert {cert} / --tls-key {key}: not a PEM certificate and its private key"
            f" (ssl: {exc.reason or 'unreadable'})"
        )
    except OSError as exc:
        fail(f"--tls-cert {cert} / --tls-key {key}: {exc.strerror or exc}")


def _cluster_client(kubeconfig: Path | None, context: str | None) -> Any:
    """The inventory's API client: in-cluster, or a kubeconfig context when either option is given."""
    from stockade.admission.inventory import ClusterConfigError, in_cluster_client, kubeconfig_client

    try:
        if kubeconfig is not None or context is not None:
            return kubeconfig_client(str(kubeconfig) if kubeconfig else None, context)
        return in_cluster_client()
    except ClusterConfigError as exc:
        fail(
            f"{exc}. The inventory (namespace labels, cluster facts) needs a cluster: run in a pod, give"
            " --kubeconfig/--context, or --no-inventory to serve without one"
        )


def _app(
    config: Path | None,
    dirs: tuple[Path, ...],
    no_evaluation: bool,
    cluster: str | None,
    remote: str | None,
    no_inventory: bool,
    kubeconfig: Path | None,
    context: str | None,
    params: Any,
    log_handler: logging.Handler | None = None,
) -> Starlette:
    """One worker's app, with its own inventory cache (threads started here, after the fork)."""
    from stockade.admission.inventory import ClusterConfigError, InventoryCache

    try:
        cfg = load_config(config) if config else Config()
    except ConfigError as exc:
        raise _StartError(str(exc)) from None
    state = WebhookState(
        config=cfg,
        config_path=config,
        policy_dirs=dirs,
        evaluation=not no_evaluation,
        cluster=cluster,
        facts=InventoryFacts(Inventory(complete=False, cluster=cluster)),
        opa_url=remote,
        isolated=cfg.admission.engine_process,  # the engine in a child process, killed on timeout
        log_handler=log_handler,
    )
    if not no_inventory:
        try:
            if kubeconfig is not None or context is not None:
                cache = InventoryCache.from_kubeconfig(
                    str(kubeconfig) if kubeconfig else None, context, cluster=cluster, params=params
                )
            else:
                cache = InventoryCache.in_cluster(cluster=cluster, params=params)
        except ClusterConfigError as exc:
            raise _StartError(str(exc)) from None
        cache.start()
        state.facts, state.ready, state.cache_age = cache, lambda: cache.synced, cache.age_seconds
        state.on_shutdown.append(cache.stop)
    return create_app(state)


# -- deployment: manifests, certs, install, uninstall -------------------------------------------------------

Namespace = Annotated[str, typer.Option("--namespace", "-n", help="The webhook's namespace.")]
Replicas = Annotated[int, typer.Option("--replicas", help="Webhook pods (at least 2).")]
FailurePolicy = Annotated[
    str, typer.Option("--failure-policy", help="Fail (reject when unreachable) or Ignore.")
]
Timeout = Annotated[int, typer.Option("--timeout", help="Seconds the API server waits (1-30).")]
CertManager = Annotated[
    bool, typer.Option("--cert-manager", help="cert-manager issues and rotates the certificate.")
]
CertsDir = Annotated[
    Path | None, typer.Option("--certs-dir", help="From `stockade webhook certs`: ca.crt is the caBundle.")
]
Image = Annotated[
    str | None, typer.Option("--image", help="Default: ghcr.io/stockade-dev/stockade:<version>.")
]
ImageDigest = Annotated[str | None, typer.Option("--image-digest", help="Pin the image: sha256:<hex>.")]
ConfigFile = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="stockade.yaml for the ConfigMap (default: starter file)."),
]
Dns = Annotated[list[str] | None, typer.Option("--dns", help="Extra DNS name for the certificate.")]
ApiserverCidr = Annotated[
    list[str] | None, typer.Option("--apiserver-cidr", help="Restrict the webhook's egress to these CIDRs.")
]
ClusterName = Annotated[
    str | None,
    typer.Option("--cluster", help="The cluster's name, as audits name it (`webhook serve --cluster`)."),
]
PriorityClass = Annotated[
    str | None,
    typer.Option(
        "--priority-class",
        help="PriorityClass of the webhook pods (system-cluster-critical needs a ResourceQuota outside"
        " kube-system).",
    ),
]
PolicyDirs = Annotated[
    list[Path] | None,
    typer.Option("--policy-dir", help="Extra Rego and Gatekeeper templates, shipped in a ConfigMap."),
]
AuditSchedule = Annotated[
    str | None,
    typer.Option(
        "--audit",
        metavar="SCHEDULE",
        help="Add a CronJob running `stockade audit --in-cluster` on this cron schedule (PolicyReports).",
    ),
]
AuditPush = Annotated[
    str | None,
    typer.Option("--audit-push-metrics", metavar="URL", help="The audit CronJob pushes its counts here."),
]
Kubeconfig = Annotated[Path | None, typer.Option("--kubeconfig", help="Default: ~/.kube/config.")]
Context = Annotated[str | None, typer.Option("--context", help="Default: the current context.")]


def _options(
    namespace: str,
    replicas: int,
    failure_policy: str,
    timeout: int,
    cert_manager: bool,
    image: str | None,
    image_digest: str | None,
    config: Path | None,
    dns: list[str] | None,
    apiserver_cidr: list[str] | None,
    cluster: str | None = None,
    policy_dir: list[Path] | None = None,
    priority_class: str | None = None,
    audit_schedule: str | None = None,
    audit_push_metrics: str | None = None,
) -> Options:
    config_text = STARTER_CONFIG
    if config is not None:
        try:
            config_text = config.read_text(encoding="utf-8")
        except OSError as exc:
            fail(f"{config}: cannot read config: {exc.strerror or exc}")
        try:
            parse_config(config_text, str(config))  # errors name the file and line
        except ConfigError as exc:
            fail(str(exc))
    options = Options(
        namespace=namespace,
        replicas=replicas,
        failure_policy=failure_policy,  # type: ignore[arg-type]  # validated below
        timeout_seconds=timeout,
        cert_manager=cert_manager,
        image=image or default_image(),
        image_digest=image_digest,
        config_text=config_text,
        extra_dns_names=tuple(dns or ()),
        apiserver_cidrs=tuple(apiserver_cidr or ()),
        cluster=cluster,
        policy_files=_policy_files(policy_dir),
        priority_class=priority_class,
        audit_schedule=audit_schedule,
        audit_push_metrics=audit_push_metrics,
    )
    try:
        options.validate()
    except ManifestError as exc:
        fail(str(exc))
    return options


def _policy_files(dirs: list[Path] | None) -> tuple[tuple[str, str], ...]:
    if not dirs:
        return ()
    _library_kinds(dirs)  # a broken template or module fails here, with its file named
    try:
        return policy_files(dirs)
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"--policy-dir: {exc}")


def _library_kinds(dirs: list[Path] | None = None, config_text: str | None = None) -> list[str]:
    """The kinds to register: those the enabled rules decide (the config's `rules:` may disable some)."""
    try:
        config = parse_config(config_text) if config_text is not None else None
        return covered_kinds(load_library(dirs or ()), config)
    except PolicyError as exc:
        fail(str(exc))


def _audit_roles(
    options: Options, config: Path | None, policy_dir: list[Path] | None
) -> list[dict[str, Any]]:
    """The audit CronJob's least ClusterRoles (`stockade audit --print-rbac` for the same config)."""
    if options.audit_schedule is None:
        return []
    from stockade.scanner.audit import audit_cluster_roles, kinds_to_list

    evaluator, _ = load_evaluator(config, policy_dir or [])
    return audit_cluster_roles(kinds_to_list(evaluator))


@app.command("manifests")
def manifests(
    namespace: Namespace = DEFAULT_NAMESPACE,
    replicas: Replicas = 3,
    failure_policy: FailurePolicy = "Fail",
    timeout: Timeout = 5,
    cert_manager: CertManager = False,
    certs_dir: CertsDir = None,
    image: Image = None,
    image_digest: ImageDigest = None,
    config: ConfigFile = None,
    dns: Dns = None,
    apiserver_cidr: ApiserverCidr = None,
    cluster: ClusterName = None,
    policy_dir: PolicyDirs = None,
    priority_class: PriorityClass = None,
    audit: AuditSchedule = None,
    audit_push_metrics: AuditPush = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    kustomize_dir: Annotated[
        Path | None, typer.Option("--kustomize-dir", help="Write a kustomize base (one file per object).")
    ] = None,
    registration: Annotated[
        bool,
        typer.Option(
            "--registration",
            help="Only the ValidatingWebhookConfiguration, to apply once the webhook has rolled out.",
        ),
    ] = False,
) -> None:
    """Render everything the webhook needs in a cluster (never the TLS key: `install` creates that Secret).

    The ValidatingWebhookConfiguration is left out (`--registration` prints it): applied together,
    the API server would call a fail-closed webhook before any replica is ready. With
    `--kustomize-dir` it goes into the base's `registration/` folder."""
    config = config_file(config)
    options = _options(
        namespace,
        replicas,
        failure_policy,
        timeout,
        cert_manager,
        image,
        image_digest,
        config,
        dns,
        apiserver_cidr,
        cluster,
        policy_dir,
        priority_class,
        audit,
        audit_push_metrics,
    )
    if not cert_manager:
        if certs_dir is None:
            fail("give --certs-dir DIR (see `stockade webhook certs`) or --cert-manager")
        try:
            options = replace(options, ca_bundle=ca_bundle(certs_dir))
        except FileNotFoundError as exc:
            fail(str(exc))
        host = f"{WEBHOOK}.{namespace}.svc"  # the name the API server calls
        if host not in serving_dns_names(certs_dir):
            fail(f"{certs_dir}/tls.crt does not name {host}: run `stockade webhook certs -n {namespace}`")
    try:
        objects = render(
            options,
            _library_kinds(policy_dir, options.config_text),
            audit_roles=_audit_roles(options, config, policy_dir),
        )
    except (ManifestError, UnknownKind) as exc:
        fail(str(exc))
    if kustomize_dir is not None:
        with writing(kustomize_dir):
            write_kustomize(objects, kustomize_dir)
        typer.echo(
            f"wrote {len(objects)} objects to {kustomize_dir} (the webhook configuration in"
            f" {kustomize_dir / REGISTRATION_DIR}: apply it once the webhook has rolled out)",
            err=True,
        )
    for kind in param_kinds(options.policy_files):
        typer.echo(
            f"stockade: note: a ValidatingAdmissionPolicy's params are {kind.kind} objects: the webhook's "
            f"ClusterRole lists and watches {kind.plural or kind.kind} cluster-wide"
            + (" (their values are never kept: key names only)" if kind.kind == "Secret" else ""),
            err=True,
        )
    base, hook = split_registration(objects)
    if registration:
        text = to_documents(hook)
    else:
        text = to_documents(base) + (
            "# The ValidatingWebhookConfiguration is not in this output: a fail-closed webhook registered\n"
            "# before a replica is ready rejects every write it judges. Once the webhook is ready:\n"
            f"#   kubectl -n {namespace} rollout status deployment/{WEBHOOK} --timeout=5m\n"
            "#   stockade webhook manifests --registration <the same options> | kubectl apply -f -\n"
            "# (`stockade webhook install` does both in order.)\n"
        )
    if output is not None:
        with writing(output):
            output.write_text(text, encoding="utf-8")
    elif kustomize_dir is None:
        typer.echo(text, nl=False)


@app.command("certs")
def certs(
    output_dir: Annotated[
        Path | None,
        typer.Option("--output-dir", help="ca.crt, ca.key, tls.crt, tls.key (created or renewed)."),
    ] = None,
    dns: Dns = None,
    namespace: Namespace = DEFAULT_NAMESPACE,
    renew_before_days: Annotated[
        int, typer.Option("--renew-before-days", help="Re-issue a serving certificate this close to expiry.")
    ] = SERVING_RENEW_BEFORE.days,
    cert_manager: Annotated[
        bool, typer.Option("--cert-manager", help="Print cert-manager Issuer/Certificate objects instead.")
    ] = False,
) -> None:
    """Create the webhook's CA and serving certificate, or renew them before they expire (idempotent)."""
    try:
        names = Options(namespace=namespace, extra_dns_names=tuple(dns or ())).validated().dns_names
    except ManifestError as exc:
        fail(str(exc))
    if cert_manager:
        typer.echo(to_documents(cert_manager_objects(namespace, names)), nl=False)
        typer.echo(
            f"# and on the ValidatingWebhookConfiguration: {CA_INJECT_ANNOTATION}: {namespace}/{WEBHOOK}"
        )
        return
    if output_dir is None:
        fail("give --output-dir DIR (or --cert-manager)")
    if renew_before_days < 1:
        fail("--renew-before-days must be at least 1")
    try:
        report = ensure_certs(output_dir, names, serving_renew_before=dt.timedelta(days=renew_before_days))
    except (OSError, ValueError) as exc:
        fail(f"{output_dir}: {exc}")
    typer.echo(f"CA: {report.ca} (expires {report.ca_not_after:%Y-%m-%d})")
    typer.echo(f"serving certificate: {report.serving} (expires {report.serving_not_after:%Y-%m-%d})")
    typer.echo(f"names: {', '.join(report.dns_names)}")


def _api_client(kubeconfig: Path | None, context: str | None) -> Any:
    """A kubeconfig context's client, checked (the file exists, the context is in it) before any
    request is made or anything is written."""
    from stockade.admission.inventory import ClusterConfigError, kubeconfig_client

    try:
        return kubeconfig_client(str(kubeconfig) if kubeconfig else None, context)
    except ClusterConfigError as exc:
        fail(str(exc))


def _run_against_cluster(api_client: Any, action: Callable[[], object]) -> None:
    """Run `action`, turning refusals and connection failures into one line (host, never credentials)."""
    try:
        action()
    except InstallError as exc:
        fail(str(exc))
    except urllib3.exceptions.HTTPError as exc:
        fail(f"cannot reach the API server at {api_client.configuration.host}: {type(exc).__name__}")
    finally:
        api_client.close()


@app.command("install")
def install_cmd(
    context: Context = None,
    kubeconfig: Kubeconfig = None,
    namespace: Namespace = DEFAULT_NAMESPACE,
    replicas: Replicas = 3,
    failure_policy: FailurePolicy = "Fail",
    timeout: Timeout = 5,
    cert_manager: CertManager = False,
    certs_dir: Annotated[
        Path | None, typer.Option("--certs-dir", help="Certificates to use, created or renewed first.")
    ] = None,
    image: Image = None,
    image_digest: ImageDigest = None,
    config: ConfigFile = None,
    dns: Dns = None,
    apiserver_cidr: ApiserverCidr = None,
    cluster: ClusterName = None,
    policy_dir: PolicyDirs = None,
    priority_class: PriorityClass = None,
    audit: AuditSchedule = None,
    audit_push_metrics: AuditPush = None,
    wait: Annotated[
        int,
        typer.Option(
            "--wait", help="Seconds to wait for the rollout before registering the webhook (0: no)."
        ),
    ] = 300,
) -> None:
    """Server-side apply everything (idempotent); the webhook is registered once its pods are ready.

    Everything is checked (config, policy dirs, kubeconfig and context, the certificate directory)
    before the certificates are written or anything is applied."""
    config = config_file(config)
    options = _options(
        namespace,
        replicas,
        failure_policy,
        timeout,
        cert_manager,
        image,
        image_digest,
        config,
        dns,
        apiserver_cidr,
        cluster,
        policy_dir,
        priority_class,
        audit,
        audit_push_metrics,
    )
    if not cert_manager and certs_dir is None:
        fail("give --certs-dir DIR (created if empty, renewed when due) or --cert-manager")
    kinds = _library_kinds(policy_dir, options.config_text)
    roles = _audit_roles(options, config, policy_dir)
    if certs_dir is not None and not cert_manager:
        try:
            check_writable(certs_dir)
        except OSError as exc:
            fail(f"--certs-dir {exc}")
    api_client = _api_client(kubeconfig, context)
    try:
        objects, plan = install_objects(options, kinds, certs_dir, roles)
    except (ManifestError, UnknownKind) as exc:
        api_client.close()
        fail(str(exc))
    except (OSError, ValueError) as exc:  # certificate files that cannot be read or parsed
        api_client.close()
        fail(f"--certs-dir {certs_dir}: {getattr(exc, 'strerror', None) or exc}")
    if plan is not None:
        try:
            plan.write()
        except OSError as exc:
            api_client.close()
            fail(f"{certs_dir}: {exc.strerror or exc}")
        report = plan.report
        typer.echo(f"certificates in {certs_dir}: CA {report.ca}, serving certificate {report.serving}")
    _run_against_cluster(
        api_client, lambda: install(api_client, objects, float(wait), on_outcome=lambda o: typer.echo(str(o)))
    )


@app.command("uninstall")
def uninstall_cmd(
    context: Context = None,
    kubeconfig: Kubeconfig = None,
    namespace: Namespace = DEFAULT_NAMESPACE,
    keep_namespace: Annotated[
        bool, typer.Option("--keep-namespace", help="Delete the objects but not the namespace.")
    ] = False,
) -> None:
    """Remove the webhook: its configuration first, then everything install created."""
    try:
        Options(namespace=namespace).validate()
    except ManifestError as exc:
        fail(str(exc))
    api_client = _api_client(kubeconfig, context)
    objects = uninstall_objects(namespace)
    _run_against_cluster(
        api_client,
        lambda: uninstall(api_client, objects, keep_namespace, on_outcome=lambda o: typer.echo(str(o))),
    )


@app.command("register")
def register_cmd(
    context: Context = None,
    kubeconfig: Kubeconfig = None,
    in_cluster: Annotated[
        bool, typer.Option("--in-cluster", help="Use the pod's ServiceAccount (the Helm chart's hooks).")
    ] = False,
    namespace: Namespace = DEFAULT_NAMESPACE,
    failure_policy: FailurePolicy = "Fail",
    timeout: Timeout = 5,
    cert_manager: CertManager = False,
    ca_bundle_file: Annotated[
        Path | None,
        typer.Option("--ca-bundle", help="PEM file of the CA that signed the serving certificate."),
    ] = None,
    config: ConfigFile = None,
    policy_dir: PolicyDirs = None,
    self_issued_certs: Annotated[
        bool,
        typer.Option(
            "--self-issued-certs",
            help="The webhook issues its own certificate: the caBundle is the CA it publishes in the"
            " ConfigMap stockade-webhook-ca-bundle (read once the rollout is done).",
        ),
    ] = False,
    wait: Annotated[
        int, typer.Option("--wait", help="Seconds to wait for the webhook's rollout first (0: no).")
    ] = 300,
    delete: Annotated[bool, typer.Option("--delete", help="Remove the registration instead.")] = False,
) -> None:
    """Register the webhook (apply its ValidatingWebhookConfiguration) once its Deployment has rolled
    out, or remove the registration with --delete: the Helm chart's post-install and pre-delete hooks."""
    api_client = _in_cluster_client() if in_cluster else _api_client(kubeconfig, context)
    if delete:
        _run_against_cluster(api_client, lambda: typer.echo(str(unregister(api_client))))
        return
    config = config_file(config)
    options = _options(
        namespace, 2, failure_policy, timeout, cert_manager, None, None, config, None, None, None, policy_dir
    )
    if self_issued_certs:
        if cert_manager or ca_bundle_file is not None:
            fail("--self-issued-certs excludes --cert-manager and --ca-bundle")
        _register_self_issued(api_client, options, policy_dir, namespace, float(wait))
        return
    if not cert_manager:
        if ca_bundle_file is None:
            fail("give --ca-bundle FILE (the CA's PEM), --cert-manager or --self-issued-certs")
        try:
            options = replace(options, ca_bundle=ca_bundle_file.read_bytes())
        except OSError as exc:
            fail(f"--ca-bundle {ca_bundle_file}: {exc.strerror or exc}")
        if b"-----BEGIN CERTIFICATE-----" not in (options.ca_bundle or b""):
            fail(f"--ca-bundle {ca_bundle_file}: not a PEM certificate")
    try:
        configuration = webhook_configuration(options, _library_kinds(policy_dir, options.config_text))
    except (ManifestError, UnknownKind) as exc:
        fail(str(exc))
    _run_against_cluster(
        api_client, lambda: typer.echo(str(register(api_client, configuration, namespace, float(wait))))
    )


def _register_self_issued(
    api_client: Any, options: Options, policy_dir: list[Path] | None, namespace: str, wait: float
) -> None:
    """Wait for the rollout (the replicas publish the CA before they are ready), then register with
    the CA bundle they published."""
    from stockade.webhooks.install import wait_rolled_out
    from stockade.webhooks.selfcert import SelfCertError, read_ca_bundle

    kinds = _library_kinds(policy_dir, options.config_text)

    def action() -> None:
        if wait > 0:
            wait_rolled_out(api_client, namespace, WEBHOOK, wait)
        try:
            bundle = read_ca_bundle(api_client, namespace)
        except SelfCertError as exc:
            raise InstallError(str(exc)) from None
        if bundle is None:
            raise InstallError(
                f"ConfigMap {namespace}/{CA_BUNDLE_MAP} has no ca.crt: is the webhook running with"
                " --self-issued-certs? (its logs say why not)"
            )
        try:
            configuration = webhook_configuration(replace(options, ca_bundle=bundle), kinds)
        except (ManifestError, UnknownKind) as exc:
            raise InstallError(str(exc)) from None
        typer.echo(str(register(api_client, configuration, namespace, 0)))

    _run_against_cluster(api_client, action)


def _in_cluster_client() -> Any:
    configuration = k8s_client.Configuration()
    try:
        load: Any = k8s_config.load_incluster_config  # untyped in some client versions
        load(client_configuration=configuration)
    except k8s_config.ConfigException as exc:
        fail(f"--in-cluster: {exc}")
    return k8s_client.ApiClient(configuration)


@app.command("chart")
def chart_cmd(
    output: Annotated[Path, typer.Option("--output", "-o", help="The chart's directory (written).")] = Path(
        "webhooks/chart/stockade"
    ),
) -> None:
    """Write the Helm chart, generated from the same renderer as `manifests` (so the two never drift)."""
    from stockade.policies.evaluate import Evaluator
    from stockade.scanner.audit import audit_cluster_roles, kinds_to_list

    files = chart_files(audit_cluster_roles(kinds_to_list(Evaluator.default(parse_config(STARTER_CONFIG)))))
    for stale in (output / "templates").glob("*") if (output / "templates").is_dir() else ():
        if f"templates/{stale.name}" not in files:
            stale.unlink()
    with writing(output):
        for name, text in files.items():
            path = output / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {len(files)} files to {output}", err=True)
