"""An audit reads Secrets' data key names for STK-STO-004 and never keeps, reports or logs a value.

The fake API server (examples/fleet/apiserver.py) serves the Secret whole, values and a
last-applied-configuration annotation (which holds the values in clear) included, as a real API
server does; the reader must reduce it before anything else sees it.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
import pytest

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator
from stockade.scanner.audit import Target, run_audit
from stockade.scanner.reports import FORMATS, get_report
from stockade.scanner.sources.cluster import ClusterReader
from tests.fleet import fake, reader

KEY_VALUE = "bm90LWEtcmVhbC1rZXktYnV0LW5ldmVyLXByaW50LW1l"
SAS_VALUE = "sv=2022-11-02&ss=b&sig=do-not-print-this"


def _reader(url: str) -> ClusterReader:
    return reader(url)


def test_no_secret_value_reaches_a_report_or_a_log(caplog: pytest.LogCaptureFixture) -> None:
    last_applied = orjson.dumps({"stringData": {"azurestorageaccountsastoken": SAS_VALUE}}).decode()
    secret: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "checkpoints-key",
            "namespace": "ml-training",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last_applied, "team": "ml"},
        },
        "data": {"azurestorageaccountname": "c3Q=", "azurestorageaccountkey": KEY_VALUE},
        "type": "Opaque",
    }
    cluster = fake.FakeCluster.from_objects("c", [secret], simulate=False)
    caplog.set_level(logging.DEBUG)
    kept: list[bytes] = []
    with fake.ServedCluster(cluster) as served:
        result = run_audit(
            [Target("c", lambda: _reader(served.url))],
            Evaluator.default(parse_config("storage: {approved_accounts: [st*]}")),
            version="test",
            on_snapshot=lambda snap, _: kept.append(orjson.dumps(snap.objects)),
        )
    # what the audit kept in memory: the Secret reduced to metadata, type and key names
    (objects,) = kept
    assert KEY_VALUE.encode() not in objects and b"do-not-print" not in objects
    (kept_secret,) = [o for o in orjson.loads(objects) if o["kind"] == "Secret"]
    assert kept_secret["dataKeys"] == ["azurestorageaccountkey", "azurestorageaccountname"]
    assert kept_secret["metadata"]["annotations"] == {"team": "ml"}
    (finding,) = [f for f in result.findings if f.rule.id == "STK-STO-004"]
    assert finding.resource.display() == "Secret/ml-training/checkpoints-key"
    assert finding.details == {"key": "azurestorageaccountkey"}
    rendered = [get_report(fmt).render(result) for fmt in FORMATS]
    for text in [*rendered, caplog.text]:
        assert KEY_VALUE not in text and SAS_VALUE not in text and "do-not-print" not in text
    assert any("azurestorageaccountkey" in text for text in rendered)
