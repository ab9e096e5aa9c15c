"""The image library's parser (policies/runtimes/cel.py `parse_image`) against go-containerregistry's own
test vectors for `name.ParseReference` with default options (pkg/name/*_test.go: tag, digest,
repository and registry names), which Kubernetes' image library calls, plus cases that follow from
its code. Where versions of go-containerregistry differ, stockade takes the stricter: an empty tag
after the colon and a URL scheme are errors."""

from __future__ import annotations

import pytest

from stockade.policies.runtimes.cel import parse_image

D = "sha256:" + "deadb33f" * 8
HUB = "index.docker.io"

VALID = [
    ("gcr.io/g-convoy/hello-world:latest", "gcr.io", "g-convoy/hello-world", "latest", ""),
    (
        "gcr.io/google.com/g-convoy/hello-world:latest",
        "gcr.io",
        "google.com/g-convoy/hello-world",
        "latest",
        "",
    ),
    ("gcr.io/project-id/with-nums:v2", "gcr.io", "project-id/with-nums", "v2", ""),
    (
        "us.gcr.io/project-id/image:with.period.in.tag",
        "us.gcr.io",
        "project-id/image",
        "with.period.in.tag",
        "",
    ),
    (
        "gcr.io/project-id/image:w1th-alpha_num3ric.PLUScaps",
        "gcr.io",
        "project-id/image",
        "w1th-alpha_num3ric.PLUScaps",
        "",
    ),
    ("domain.with.port:9001/image:latest", "domain.with.port:9001", "image", "latest", ""),
    ("namespace/pathcomponent/image", HUB, "namespace/pathcomponent/image", "latest", ""),
    ("library/ubuntu", HUB, "library/ubuntu", "latest", ""),
    ("www.example.test:12345/repo/path", "www.example.test:12345", "repo/path", "latest", ""),
    ("ubuntu", HUB, "library/ubuntu", "latest", ""),
    (f"gcr.io/g-convoy/hello-world@{D}", "gcr.io", "g-convoy/hello-world", "", D),
    (f"example.text/foo/bar@{D}", "example.text", "foo/bar", "", D),
    (f"library/ubuntu@{D}", HUB, "library/ubuntu", "", D),
    (f"example.text:8443/foo/bar:latest@{D}", "example.text:8443", "foo/bar", "", D),
    (f"example.text/foo/bar:v1.0.0-alpine@{D}", "example.text", "foo/bar", "", D),
    (f"nginx:latest@{D}", HUB, "library/nginx", "", D),
    ("mirror.gcr.io/ubuntu", "mirror.gcr.io", "ubuntu", "latest", ""),
    ("docker.io/ubuntu", HUB, "library/ubuntu", "latest", ""),
    ("index.docker.io/ubuntu", HUB, "library/ubuntu", "latest", ""),
    ("registry-1.docker.io/ubuntu", "registry-1.docker.io", "ubuntu", "latest", ""),
    ("localhost/testimage", HUB, "localhost/testimage", "latest", ""),  # no "." or ":": not a registry
    ("localhost:5000/foo:bar", "localhost:5000", "foo", "bar", ""),
    ("[::1]:5000/foo:bar", "[::1]:5000", "foo", "bar", ""),
    ("127.0.0.1:5000/foo", "127.0.0.1:5000", "foo", "latest", ""),
    ("GCR.IO/foo", "GCR.IO", "foo", "latest", ""),
    ("ab", HUB, "library/ab", "latest", ""),
    ("ubuntu:" + "a" * 128, HUB, "library/ubuntu", "a" * 128, ""),
]
INVALID = [
    "gcr.io/project-id/bad_chars:c@n'tuse",
    "gcr.io/project-id/wrong-length:white space",
    "gcr.io/project-id/too-many-chars:" + "thisisthetagthatneverends" * 7,
    "library/ubuntu:",
    "gcr.io/project-id/unknown-alg@unknown:abc123",
    "gcr.io/project-id/wrong-length@sha256:d34db33fd34db33f",
    "gcr.io/project-id/missing-digest@",
    "repo@sha256:" + ":" * 64,
    "repo@sha256:" + "sh" * 32,
    f"repo@{D}@{D}",
    f"library/nginx:@{D}",
    "white space",
    "b@char/image",
    "",
    "ubuntu:" + "a" * 129,
    "a",
    "example.com/a",
    "Ubuntu",
    "gcr.io/Foo",
    "foo:bar:baz",
    "gcr.io:abc/foo",
    "gcr.io#x/foo",
    "gcr.io/foo@sha256:" + "DEADB33F" * 8,
    "gcr.io/foo@sha512:" + "ab" * 64,
    "http://gcr.io/foo",
    "registry.k8s.io/kube-apiserver-arm64:@",
]


@pytest.mark.parametrize(
    ("text", "registry", "repository", "tag", "digest"), VALID, ids=[v[0][:50] for v in VALID]
)
def test_valid_references(text: str, registry: str, repository: str, tag: str, digest: str) -> None:
    ref = parse_image(text)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (registry, repository, tag, digest)
    assert ref.identifier == (digest or tag)


@pytest.mark.parametrize("text", INVALID, ids=[t[:50] for t in INVALID])
def test_invalid_references(text: str) -> None:
    with pytest.raises(ValueError):
        parse_image(text)
