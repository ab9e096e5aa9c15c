# Two commands a new user needs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stockade-installed
TYPECHECK := .typecheck/stockade
PKGS := policies scanner admission webhooks cli

.PHONY: demo test lint typecheck pytest bench install clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
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

pytest: $(STAMP)
	$(VENV)/bin/pytest

test: lint typecheck pytest

demo: $(STAMP)
	$(VENV)/bin/stockade policy list
	$(VENV)/bin/stockade scan examples/manifests --config examples/stockade.yaml --fail-on never
	$(VENV)/bin/stockade scan examples/manifests --config examples/stockade.yaml --format sarif --output .demo/scan.sarif --fail-on never
	@echo "SARIF report written to .demo/scan.sarif"

bench: $(STAMP)
	$(PY) bench/scan.py

clean:
	rm -rf $(VENV) .typecheck .mypy_cache .pytest_cache .ruff_cache .demo
