# sample-controller-py: every target that needs Python runs it from .venv, created on demand.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: venv test lint demo demo-ui sim run e2e bench image image-smoke install-crd clean

venv: $(STAMP)

# Two distributions: kubesim (kubesim/pyproject.toml; the tests' API server and its pytest
# plugin) and the controller with its test and lint extras. kubesim first: it is on no index.
$(STAMP): pyproject.toml kubesim/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ./kubesim -e '.[test,lint]'
	touch $(STAMP)

## test: the whole default suite (unit + integration against kubesim; e2e skips without a cluster)
test: venv
	$(PY) -m pytest -q

## lint: ruff's checks, ruff's formatting (line length 100), mypy (strict on workqueue, client,
## informer, tools, controller) and the import contracts (pyproject.toml [tool.importlinter])
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

## demo: the controller against the embedded API server (kubesim, Pods run on a simulated node),
## narrated; no cluster needed
demo: venv
	$(PY) -m demo

## demo-ui: the same cluster and controller, drawn live in a browser: serves a page on 127.0.0.1
## (a free port, printed; ARGS=--port=8080 to choose) until Ctrl-C (docs/demo-ui.md)
demo-ui: venv
	$(PY) -m demo.ui $(ARGS)

## sim: kubesim for a local run, in the foreground: the CRDs installed, Deployments' Pods run on a
## simulated node, and the `export KUBECONFIG=...` line to paste in another terminal (its own file,
## .kubesim/kubeconfig); Ctrl-C stops it and removes that file (ARGS=--listen=HOST:PORT to choose)
sim: venv
	$(PY) -m demo.sim $(ARGS)

## install-crd: apply the Foo CRD to the cluster of the current kubeconfig
install-crd: venv
	$(VENV)/bin/kubectl apply -f crds/foo-crd.yaml

## run: the controller against the current kubeconfig (make install-crd first)
run: venv
	$(VENV)/bin/sample-controller $(ARGS)

## e2e: tests/e2e against a real kube-apiserver: E2E_KUBECONFIG=<admin kubeconfig> (a cluster) or
## KUBEBUILDER_ASSETS=<dir> (envtest: etcd + kube-apiserver started here); E2E_KUBESIM=1 uses
## kubesim instead. With none of them set, every test is skipped with the reason.
e2e: venv
	E2E_KUBESIM=$${E2E_KUBESIM:-0} $(PY) -m pytest -q -ra tests/e2e -m e2e

## bench: every bench/*_bench.py, run as python -m bench.<name>, each printing its figures beside
## a same-run baseline (the bench extra adds kopf and matplotlib: bench.e2e_bench's peer and chart)
BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	@set -e; for f in bench/*_bench.py; do m=bench.$$(basename $$f .py); echo "== $$m"; $(PY) -m $$m; done

## image: the controller's image (Dockerfile); needs docker with a running engine and BuildKit.
##   PYTHON_IMAGE=<ref>   base image (default: the Dockerfile's python:3.11-slim), e.g. a mirror's
##   PIP_INDEX_URL / PIP_EXTRA_INDEX_URL / PIP_TRUSTED_HOST=...   a package mirror (build args)
##   PIP_CERT=<file> / PIP_CONFIG_FILE=<file>   CA bundle / pip.conf, passed as build secrets
##   DOCKER_BUILD_FLAGS=...   more docker build flags (e.g. --network host where there is no bridge)
IMAGE  ?= sample-controller-py:0.1.0
DOCKER ?= docker
# A comma that $(if ...) does not take for its own separator.
COMMA  := ,
image:
	@if ! command -v $(DOCKER) >/dev/null 2>&1; then \
		echo "make image: docker is not installed; install it, then: docker build -t $(IMAGE) ."; exit 1; \
	elif ! $(DOCKER) info >/dev/null 2>&1; then \
		echo "make image: docker is installed but its engine is not reachable (docker info failed); start it, then: docker build -t $(IMAGE) ."; exit 1; \
	fi
	DOCKER_BUILDKIT=1 $(DOCKER) build \
		$(if $(PYTHON_IMAGE),--build-arg PYTHON_IMAGE=$(PYTHON_IMAGE)) \
		$(if $(PIP_INDEX_URL),--build-arg PIP_INDEX_URL=$(PIP_INDEX_URL)) \
		$(if $(PIP_EXTRA_INDEX_URL),--build-arg 'PIP_EXTRA_INDEX_URL=$(PIP_EXTRA_INDEX_URL)') \
		$(if $(PIP_TRUSTED_HOST),--build-arg 'PIP_TRUSTED_HOST=$(PIP_TRUSTED_HOST)') \
		$(if $(PIP_CERT),--secret id=pip_cert$(COMMA)src=$(PIP_CERT)) \
		$(if $(PIP_CONFIG_FILE),--secret id=pip_conf$(COMMA)src=$(PIP_CONFIG_FILE)) \
		$(DOCKER_BUILD_FLAGS) -t $(IMAGE) .

## image-smoke: run the built image as manifests/base/deployment.yaml runs it (non-root, read-only
## root filesystem, no capabilities, in-cluster config and token) against kubesim on the host network,
## and check probes, a reconciled Foo and a clean exit on SIGTERM. Needs a docker engine.
image-smoke: venv
	@$(PY) hack/image_smoke.py --image $(IMAGE) --docker $(DOCKER)

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache .import_linter_cache
