"""The framework's floor for `bench/webhook.py --bare`: an AdmissionReview round trip through uvicorn
(httptools, uvloop) and Starlette alone, over the same TLS, with nothing of stockade's: the body is
read and parsed as JSON and the review answered "allowed" with its uid. What stockade's own floor
(`webhook serve --no-evaluation`) costs above this is stockade's request path outside the engine
(body bounds, the review's model, the refusal checks, metrics, the log line)."""

from __future__ import annotations

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route


async def readyz(_: Request) -> Response:
    return PlainTextResponse("ok")


async def validate(request: Request) -> Response:
    review = orjson.loads(await request.body())
    answer = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": review["request"]["uid"], "allowed": True},
    }
    return Response(orjson.dumps(answer), media_type="application/json")


app = Starlette(routes=[Route("/readyz", readyz), Route("/validate", validate, methods=["POST"])])
