# syntax=docker/dockerfile:1
# The controller's image: `make image` (docker build -t sample-controller-py:0.1.0 .).
#
# Only what the controller runs on: the workqueue, client, informer, tools and controller
# packages and their runtime dependencies (kubernetes, pyyaml, prometheus-client). No test
# extras, and no kubesim or jsonschema, which only the tests use. It runs as a numeric non-root
# user, so the Deployment's runAsNonRoot can be checked by the kubelet, on a read-only root
# filesystem.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY workqueue/ workqueue/
COPY client/ client/
COPY informer/ informer/
COPY tools/ tools/
COPY controller/ controller/
# kubesim/ is not copied, so the wheel leaves it out; drop its console script too.
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install . \
 && rm -f /opt/venv/bin/kubesim \
 && /opt/venv/bin/python -c "import controller.__main__"

FROM python:3.11-slim
# 65532: the conventional "nonroot" uid; manifests/deployment.yaml runs the pod as the same.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY --from=build /opt/venv /opt/venv
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["sample-controller"]
