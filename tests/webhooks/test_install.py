"""`install` and `uninstall` through the real `kubernetes` client against a fake API server on 127.0.0.1.

The fake is `tests/webhooks/fake_apply_server.py`'s FakeApplyServer: a subclass of the admission
tests' aiohttp FakeApiServer (`tests/admission/fake_apiserver.py`) that adds server-side apply, GET and
DELETE of single objects, with a real server's checks that matter here (apply content type,
fieldManager and force, body matching the path, namespace existence, no-op applies keeping the
resourceVersion). What is proven: every object is applied by server-side apply, twice gives the same
state, the webhook is registered only after the rollout, certificates rotate through a re-install,
and uninstall removes everything (and tolerates what is already gone).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.engines.library import load_library
from stockade.webhooks.certs import ensure_certs
from stockade.webhooks.install import (
    InstallError,
    install,
    install_objects,
    uninstall,
    uninstall_objects,
)
from stockade.webhooks.manifests import NAME, TLS_SECRET, Options, covered_kinds

KINDS = covered_kinds(load_library())
NS = "stockade-system"


def objects(certs: Path, **options: Any) -> list[dict[str, Any]]:
    objs, plan = install_objects(Options(**options), KINDS, certs)
    if plan is not None:
        plan.write()  # as `stockade webhook install` does once every check has passed
    return objs


def applied(server: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
    return server.snapshot()


def test_install_applies_every_object_by_server_side_apply(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    objs = objects(tmp_path / "certs")
    outcomes = install(api_client, objs, wait_seconds=5, poll=0.01)
    assert [o.result for o in outcomes] == ["created"] * len(objs)
    state = applied(apply_server)
    assert len(state) == len(objs)
    patches = [c for c in apply_server.calls if c.method == "PATCH"]
    assert len(patches) == len(objs)
    assert all(c.content_type == "application/apply-patch+yaml" for c in patches)
    assert all(c.query == {"fieldManager": "stockade", "force": "true"} for c in patches)
    assert all(c.authorized for c in apply_server.calls)
    # The webhook is registered last, after the Deployment was seen rolled out.
    paths = [c.path for c in apply_server.calls]
    assert paths[-1] == f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{NAME}"
    assert f"/apis/apps/v1/namespaces/{NS}/deployments/{NAME}/status" in paths
    secret = state[("secrets", NS, TLS_SECRET)]
    assert base64.b64decode(secret["data"]["tls.crt"]) == (tmp_path / "certs" / "tls.crt").read_bytes()
    hook = state[("validatingwebhookconfigurations", "", NAME)]["webhooks"][0]
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == (tmp_path / "certs" / "ca.crt").read_bytes()


def test_install_twice_is_the_same_state(apply_server: Any, api_client: Any, tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    install(api_client, objects(certs), wait_seconds=5, poll=0.01)
    first = applied(apply_server)
    outcomes = install(api_client, objects(certs), wait_seconds=5, poll=0.01)
    assert {o.result for o in outcomes} == {"applied"}
    assert applied(apply_server) == first  # not even a resourceVersion moved


def test_a_changed_option_or_rotated_certificate_is_applied(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    certs = tmp_path / "certs"
    install(api_client, objects(certs), wait_seconds=5, poll=0.01)
    first = applied(apply_server)
    (certs / "tls.crt").unlink()  # as if expiring: the next install re-issues it
    install(api_client, objects(certs, replicas=5, failure_policy="Ignore"), wait_seconds=5, poll=0.01)
    second = applied(apply_server)
    changed = {k for k in first if first[k] != second[k]}
    assert changed == {
        ("secrets", NS, TLS_SECRET),
        ("deployments", NS, NAME),
        ("validatingwebhookconfigurations", "", NAME),
    }
    assert second[("deployments", NS, NAME)]["spec"]["replicas"] == 5
    assert second[("deployments", NS, NAME)]["metadata"]["generation"] == 2


def test_the_webhook_is_not_registered_before_the_rollout(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    apply_server.deployments_roll_out = False
    with pytest.raises(InstallError, match=r"did not roll out within 0\.05s"):
        install(api_client, objects(tmp_path / "certs"), wait_seconds=0.05, poll=0.01)
    assert ("deployments", NS, NAME) in applied(apply_server)
    assert ("validatingwebhookconfigurations", "", NAME) not in applied(apply_server)


def test_uninstall_removes_everything_and_is_idempotent(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    install(api_client, objects(tmp_path / "certs"), wait_seconds=5, poll=0.01)
    outcomes = uninstall(api_client, uninstall_objects(NS))
    assert applied(apply_server) == {}
    assert str(outcomes[0]) == f"validatingwebhookconfiguration/{NAME} deleted"  # first: stop the calls
    assert str(outcomes[-1]) == f"namespace/{NS} deleted"
    # cert-manager's kinds are not served here (as when cert-manager is not installed): absent, not errors
    assert {o.result for o in outcomes if o.kind in ("Certificate", "Issuer")} == {"absent"}
    again = uninstall(api_client, uninstall_objects(NS))
    assert {o.result for o in again} == {"absent"}


def test_uninstall_can_keep_the_namespace(apply_server: Any, api_client: Any, tmp_path: Path) -> None:
    install(api_client, objects(tmp_path / "certs"), wait_seconds=0)
    uninstall(api_client, uninstall_objects(NS), keep_namespace=True)
    assert list(applied(apply_server)) == [("namespaces", "", NS)]


def test_cert_manager_install(fake_apply_module: Any, tmp_path: Path) -> None:
    from kubernetes import client as k8s_client

    kinds = {**fake_apply_module.APPLY_KINDS, **fake_apply_module.CERT_MANAGER_KINDS}
    server = fake_apply_module.FakeApplyServer(kinds).start()
    api = k8s_client.ApiClient(k8s_client.Configuration(host=server.url))
    try:
        objs, report = install_objects(Options(cert_manager=True), KINDS, None)
        assert report is None and not [o for o in objs if o["kind"] == "Secret"]
        install(api, objs, wait_seconds=5, poll=0.01)
        state = server.snapshot()
        assert ("certificates", NS, NAME) in state and ("issuers", NS, f"{NAME}-ca") in state
        uninstall(api, uninstall_objects(NS))
        assert server.snapshot() == {}
    finally:
        api.close()
        server.stop()


def _kubeconfig(path: Path, server: Any) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fake", "cluster": {"server": server.url}}],
                "users": [{"name": "u", "user": {"token": "deploy-cli-token-5d2e"}}],
                "contexts": [{"name": "fake-ctx", "context": {"cluster": "fake", "user": "u"}}],
                "current-context": "other",
            }
        )
    )
    return path


def test_install_and_uninstall_commands(apply_server: Any, tmp_path: Path) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", apply_server)
    certs = tmp_path / "certs"
    base = ["--kubeconfig", str(kubeconfig), "--context", "fake-ctx"]
    runner = CliRunner()
    result = runner.invoke(app, ["webhook", "install", *base, "--certs-dir", str(certs), "--replicas", "2"])
    assert result.exit_code == 0, result.output
    assert "certificates in" in result.output and "CA created, serving certificate created" in result.output
    assert f"validatingwebhookconfiguration/{NAME} created" in result.output
    assert "PRIVATE" not in result.output and "deploy-cli-token-5d2e" not in result.output
    assert apply_server.get("deployments", NS, NAME)["spec"]["replicas"] == 2
    first = apply_server.snapshot()
    result = runner.invoke(app, ["webhook", "install", *base, "--certs-dir", str(certs), "--replicas", "2"])
    assert result.exit_code == 0 and "CA kept, serving certificate kept" in result.output
    assert apply_server.snapshot() == first

    result = runner.invoke(app, ["webhook", "uninstall", *base])
    assert result.exit_code == 0, result.output
    assert apply_server.snapshot() == {}


def test_command_errors_are_one_line(apply_server: Any, tmp_path: Path) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", apply_server)
    runner = CliRunner()
    result = runner.invoke(
        app, ["webhook", "install", "--kubeconfig", str(kubeconfig), "--context", "fake-ctx"]
    )
    assert result.exit_code == 2 and "--certs-dir" in result.output
    result = runner.invoke(
        app, ["webhook", "uninstall", "--kubeconfig", str(kubeconfig), "--context", "no-such-context"]
    )
    assert result.exit_code == 2 and result.output.startswith(
        "stockade: error: --context no-such-context: not in"
    )
    apply_server.fail_next("namespaces", 500)  # a failure the server reports is named, with its message
    ensure_certs(tmp_path / "certs", Options().dns_names)
    args = ["--kubeconfig", str(kubeconfig), "--context", "fake-ctx", "--certs-dir", str(tmp_path / "certs")]
    result = runner.invoke(app, ["webhook", "install", *args])
    assert result.exit_code == 2
    assert "applying Namespace /stockade-system: HTTP 500" in result.output


def test_an_unreachable_api_server_is_one_line(tmp_path: Path) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", type("Closed", (), {"url": "http://127.0.0.1:1"})())
    args = ["webhook", "uninstall", "--kubeconfig", str(kubeconfig), "--context", "fake-ctx"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert (
        result.output == "stockade: error: cannot reach the API server at http://127.0.0.1:1: MaxRetryError\n"
    )
