# One image for `corral operator` and `corral scheduler` (the engine the rendered Deployments
# run). Contract, checked by tests/unit/controller/test_install.py against corral.render.names:
# `corral` is on PATH (the rendered command is ["corral", "scheduler", "--config",
# "/etc/corral/config.yaml", ...]), the user is 65532 (the rendered runAsUser), nothing is written
# outside /tmp (readOnlyRootFilesystem), and the templates ship inside the package (package data).
# Dependencies are pinned by constraints.txt, so two builds of one commit install the same
# versions. BASE: any image with Python 3.11 in /usr/local (the official layout); `make image`
# passes a locally made one (hack/image), docs/install.md shows Docker and buildah builds.
ARG BASE=python:3.11-slim
FROM ${BASE} AS build
WORKDIR /src
COPY pyproject.toml README.md constraints.txt ./
COPY templates ./templates
COPY operator ./operator
RUN pip install --no-cache-dir --prefix=/install -c constraints.txt .

FROM ${BASE}
COPY --from=build /install /usr/local
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
RUN mkdir -p /etc/corral
USER 65532:65532
EXPOSE 10259
CMD ["corral", "operator"]
