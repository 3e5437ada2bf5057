# Herder operator image: runtime dependencies only (no dev extras), runs as a non-root user.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY core ./core
COPY shim ./shim
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp
COPY --from=build /install /usr/local
RUN useradd --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin herder
USER 10001:10001
EXPOSE 9080 9443
ENTRYPOINT ["herder"]
CMD ["run"]
