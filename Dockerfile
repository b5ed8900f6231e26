# One image for `corral operator` and `corral scheduler` (the engine the rendered Deployments
# run). Contract, checked by tests/unit/controller/test_dockerfile.py against corral.render.names:
# `corral` is on PATH (the rendered command is ["corral", "scheduler", "--config",
# "/etc/corral/config.yaml", ...]), the user is 65532 (the rendered runAsUser), nothing is written
# outside /tmp (readOnlyRootFilesystem), and the templates are found through CORRAL_TEMPLATES.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY operator ./operator
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
COPY --from=build /install /usr/local
COPY templates /opt/corral/templates
ENV CORRAL_TEMPLATES=/opt/corral/templates \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
RUN mkdir -p /etc/corral
USER 65532:65532
EXPOSE 10259
CMD ["corral", "operator"]
