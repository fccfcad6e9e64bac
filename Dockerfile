# syntax=docker/dockerfile:1
#
# One image for all the services (and uptimectl, and the optional
# Kubernetes operator, uptime-operator). Every binary lands in /usr/local/bin; the
# Helm chart picks one per Deployment with `command: [/usr/local/bin/<name>]`.
# For running an image on its own, the build argument SERVICE sets the default
# entrypoint (api-gateway unless told otherwise):
#
#   docker build -t uptime .                            # entrypoint api-gateway
#   docker build -t uptime-checker --build-arg SERVICE=checker .
#   docker run --rm uptime migrate                      # `api-gateway migrate`
#   docker run --rm --entrypoint checker uptime serve   # any binary by name
#
# Needs BuildKit (the default in current Docker) for the cache mounts.
#
# Base images: release builds pin both by digest, so a re-pushed tag cannot
# change what ships, by passing the digests the release pipeline resolved:
#
#   docker build \
#     --build-arg BUILDER_IMAGE=rust:1-bookworm@sha256:<digest> \
#     --build-arg RUNTIME_IMAGE=debian:bookworm-slim@sha256:<digest> .
#
# (`docker buildx imagetools inspect rust:1-bookworm` prints a digest.) The
# defaults are the tags, for local builds.

ARG BUILDER_IMAGE=rust:1-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# --------------------------------------------------------------------- build
FROM ${BUILDER_IMAGE} AS builder
WORKDIR /src

# The whole workspace (see .dockerignore); migrations/ is embedded at compile time.
COPY . .

# Registry, git and target caches survive between builds; the binaries are
# copied out in the same step because cache mounts are not part of the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,target=/usr/local/cargo/git,sharing=locked \
    --mount=type=cache,target=/src/target,sharing=locked \
    set -eux; \
    cargo build --release --locked \
        -p api-gateway -p scheduler -p checker -p recorder -p notifier -p status-pages -p uptimectl \
        -p uptime-operator; \
    mkdir -p /out; \
    for bin in api-gateway scheduler checker recorder notifier status-pages uptimectl uptime-operator; do \
        install -m 0755 "target/release/$bin" /out/; \
    done

# ------------------------------------------------------------------- runtime
FROM ${RUNTIME_IMAGE} AS runtime

# ca-certificates: TLS to monitored sites, SMTP, webhooks, OTLP collectors.
# Unpinned on purpose: always take bookworm's current (security) release.
# hadolint ignore=DL3008
RUN set -eux; \
    apt-get update; \
    apt-get install -y --no-install-recommends ca-certificates; \
    rm -rf /var/lib/apt/lists/*; \
    groupadd --system --gid 10001 uptime; \
    useradd --system --uid 10001 --gid 10001 --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin uptime

COPY --from=builder /out/ /usr/local/bin/

# Which binary `docker run IMAGE` starts.
ARG SERVICE=api-gateway
RUN set -eux; \
    test -x "/usr/local/bin/${SERVICE}"; \
    ln -s "/usr/local/bin/${SERVICE}" /usr/local/bin/uptime-service

# Listen on all interfaces inside a container (the binaries default to
# loopback for local development). The Helm chart sets these too.
ENV UPTIME_HTTP__LISTEN=0.0.0.0:8080 \
    UPTIME_OPS__LISTEN=0.0.0.0:9090

# Numeric, so Kubernetes' runAsNonRoot can verify it without /etc/passwd.
USER 10001:10001

# api-gateway: API + /healthz /readyz /metrics. Others: /healthz /readyz /metrics.
EXPOSE 8080 9090

# Exec form: the binary is PID 1 and receives SIGTERM for graceful shutdown.
ENTRYPOINT ["/usr/local/bin/uptime-service"]
CMD ["serve"]
