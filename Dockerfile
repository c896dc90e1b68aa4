# The controller's image: `make image` (docker build -t sample-controller-py:0.1.0 .).
#
# Only what the controller runs on: the workqueue, client, informer, tools, runtime and
# controller packages and their runtime dependencies (kubernetes, pyyaml, prometheus-client,
# msgspec, cryptography for the metrics server's self-signed certificate). No test extras, and
# no kubesim, a distribution of its own (kubesim/pyproject.toml) that only the tests use. It
# runs as a numeric non-root user, so the Deployment's runAsNonRoot can be checked by the
# kubelet, on a read-only root filesystem. tests/image/test_image_contents.py keeps the COPY
# list equal to the packages the controller imports.
#
# Needs BuildKit (the default builder since Docker 23; DOCKER_BUILDKIT=1 on 20.10, which
# `make image` sets) for the secret mounts below. There is no `# syntax=` line on purpose: it
# would make every build pull the Dockerfile frontend from Docker Hub, which a build behind a
# registry mirror or without a registry cannot do; the builder's own frontend is enough.
#
# Build arguments (all optional):
#   PYTHON_IMAGE   the base image of both stages, for a registry mirror or a local copy:
#                  make image PYTHON_IMAGE=mirror.example.com/library/python:3.11-slim
#                  It needs python3 with the venv module (Debian's python3-venv); the venv's
#                  interpreter is a symlink into it, so both stages must use the same image.
#   PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_TRUSTED_HOST
#                  pip's own variables, for a package mirror. They are build arguments of the
#                  build stage only, so they do not reach the final image; they do show in that
#                  stage's build history, so put credentials in a pip.conf secret instead.
# Build secrets (BuildKit mounts them for the one RUN; never written to a layer):
#   pip_cert       a CA bundle for pip (PIP_CERT), e.g. a proxy's or mirror's private CA:
#                  --secret id=pip_cert,src=/etc/ssl/certs/ca-certificates.crt
#   pip_conf       a pip.conf (PIP_CONFIG_FILE), e.g. an index URL with credentials:
#                  --secret id=pip_conf,src=$HOME/.config/pip/pip.conf
# `make image` passes PIP_CERT and PIP_CONFIG_FILE (files on the host, from make's command line
# or the environment) as these secrets, and the three PIP_* URLs as build arguments.
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
ARG PIP_INDEX_URL
ARG PIP_EXTRA_INDEX_URL
ARG PIP_TRUSTED_HOST
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY workqueue/ workqueue/
COPY client/ client/
COPY informer/ informer/
COPY tools/ tools/
COPY runtime/ runtime/
COPY controller/ controller/
# The controller's wheel holds neither kubesim nor its console script (kubesim/ is its own
# distribution). The import at the end fails the build, not the pod, if a package the
# controller needs was left out.
RUN --mount=type=secret,id=pip_cert --mount=type=secret,id=pip_conf \
    set -eu; \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi; \
    if [ -s /run/secrets/pip_conf ]; then export PIP_CONFIG_FILE=/run/secrets/pip_conf; fi; \
    python3 -m venv /opt/venv; \
    /opt/venv/bin/pip install .; \
    /opt/venv/bin/python -c "import runtime.flags, runtime.manager, runtime.metrics.server, runtime.sharding.sharder, tools.leaderelection, prometheus_client"

FROM ${PYTHON_IMAGE}
# 65532: the conventional "nonroot" uid; manifests/base/deployment.yaml runs the pod as the same.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY --from=build /opt/venv /opt/venv
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["sample-controller"]
