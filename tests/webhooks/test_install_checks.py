"""`stockade webhook install` checks everything before it changes anything: a failing install leaves the
certificate directory byte-identical and sends nothing to the cluster.

Through the real command (`stockade.cli.main.app` with typer's CliRunner), HOME in the test's
directory and no KUBECONFIG, as for a new user. The one run that reaches a cluster uses the fake
apply server (tests/webhooks/fake_apply_server.py, aiohttp on 127.0.0.1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.webhooks.certs import ensure_certs
from stockade.webhooks.manifests import Options

IMAGE = ["--image", "myacr.azurecr.io/stockade:0.1.0", "--image-digest", "sha256:" + "0" * 64]


@pytest.fixture(autouse=True)
def no_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def certs(tmp_path: Path) -> Path:
    """A certificate directory from `webhook certs` for the default names (no --dns)."""
    directory = tmp_path / "certs"
    ensure_certs(directory, Options().dns_names)
    return directory


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def _kubeconfig(path: Path, url: str) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fake", "cluster": {"server": url}}],
                "users": [{"name": "u", "user": {"token": "install-checks-token-91be"}}],
                "contexts": [{"name": "fake-ctx", "context": {"cluster": "fake", "user": "u"}}],
                "current-context": "fake-ctx",
            }
        )
    )
    return path


def _install(*args: str) -> Any:
    return CliRunner().invoke(app, ["webhook", "install", *args, *IMAGE])


def _one_line(result: Any) -> str:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("stockade: error: "), result.output
    return str(lines[0])


def test_no_kubeconfig_leaves_the_certificates_as_they_were(certs: Path, tmp_path: Path) -> None:
    """The reported case: a new --dns name (which re-issues the serving certificate) and no kubeconfig.
    It printed `serving certificate reissued: DNS names changed`, then failed on the kubeconfig, with
    tls.crt already replaced."""
    before = _files(certs)
    result = _install("--context", "prod", "--certs-dir", str(certs), "--dns", "extra.example.com")
    line = _one_line(result)
    assert f"kubeconfig {tmp_path / 'home' / '.kube' / 'config'}: no such file" in line
    assert "reissued" not in result.output
    assert _files(certs) == before


def test_an_unknown_context_leaves_the_certificates_as_they_were(
    certs: Path, tmp_path: Path, apply_server: Any
) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", apply_server.url)
    before = _files(certs)
    result = _install(
        "--kubeconfig", str(kubeconfig), "--context", "prod", "--certs-dir", str(certs), "--dns", "x.example"
    )
    assert "--context prod: not in" in _one_line(result) and "(its contexts: fake-ctx)" in result.output
    assert _files(certs) == before
    assert apply_server.calls == []


@pytest.mark.parametrize("broken", ["config", "policy-dir"])
def test_a_broken_config_or_policy_dir_leaves_the_certificates_as_they_were(
    certs: Path, tmp_path: Path, apply_server: Any, broken: str
) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", apply_server.url)
    args = ["--kubeconfig", str(kubeconfig), "--certs-dir", str(certs), "--dns", "x.example"]
    if broken == "config":
        (tmp_path / "bad.yaml").write_text("apiVersion: stockade.io/v1alpha1\nkind: Config\nexeptions: []\n")
        args += ["--config", str(tmp_path / "bad.yaml")]
    else:
        (tmp_path / "rules").mkdir()
        (tmp_path / "rules" / "broken.rego").write_text("package custom.broken\ndeny contains 1 if {\n")
        args += ["--policy-dir", str(tmp_path / "rules")]
    before = _files(certs)
    _one_line(_install(*args))
    assert _files(certs) == before
    assert apply_server.calls == []


def test_a_certs_dir_that_cannot_be_written_is_one_line_before_anything_else(
    tmp_path: Path, apply_server: Any
) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", apply_server.url)
    (tmp_path / "not-a-dir").write_text("a file where the directory should be\n")
    result = _install("--kubeconfig", str(kubeconfig), "--certs-dir", str(tmp_path / "not-a-dir" / "certs"))
    assert _one_line(result) == f"stockade: error: --certs-dir {tmp_path / 'not-a-dir'}: not a directory"
    assert apply_server.calls == []


def test_a_corrupt_key_is_one_line_and_nothing_is_rewritten(certs: Path, tmp_path: Path) -> None:
    """tls.key unreadable: the CA must not be rotated and written before that is noticed."""
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:1")
    (certs / "tls.key").write_bytes(b"-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n")
    (certs / "ca.key").unlink()  # would rotate the CA
    before = _files(certs)
    result = _install("--kubeconfig", str(kubeconfig), "--certs-dir", str(certs))
    assert _one_line(result) == (
        f"stockade: error: --certs-dir {certs}: tls.key is not an unencrypted PEM private key"
        " (delete it to have it created again)"
    )
    assert _files(certs) == before


def test_a_passing_install_writes_the_new_name_and_applies(
    certs: Path, tmp_path: Path, apply_server: Any
) -> None:
    """The same command with a kubeconfig: the certificate is re-issued with the new name, and then
    applied (the fake server rolls the Deployment out at once)."""
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", apply_server.url)
    result = _install(
        "--kubeconfig",
        str(kubeconfig),
        "--certs-dir",
        str(certs),
        "--dns",
        "extra.example.com",
        "--wait",
        "5",
    )
    assert result.exit_code == 0, result.output
    assert "serving certificate reissued: DNS names changed" in result.output
    from stockade.webhooks.certs import serving_dns_names

    assert "extra.example.com" in serving_dns_names(certs)
    assert any(c.method == "PATCH" for c in apply_server.calls)
