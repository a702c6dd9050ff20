#!/usr/bin/env bash
# Builds the two base images the Dockerfiles start from, without a container registry:
#   localhost/tuneboard-base/node:20     stands in for docker.io/library/node:20-bookworm-slim
#   localhost/tuneboard-base/python:3.11 stands in for docker.io/library/python:3.11-slim-bookworm
#   localhost/tuneboard-base/postgres:15 stands in for docker.io/library/postgres:15-bookworm (Debian's
#     postgresql-15, with the official image's contract: POSTGRES_USER/PASSWORD/DB, PGDATA, pg_isready)
# Both start from a Debian bookworm root file system made by debootstrap (minbase) from the machine's own apt
# mirror; the Node.js image gets this machine's node (v20, one binary) and npm, the Python one Debian's python3
# (3.11, the version the worker is tested with). Used by deploy/up.sh when the official images can neither be
# found nor pulled. Needs root, debootstrap and podman. Idempotent: an image already present is kept
# (TUNEBOARD_REBUILD_BASE=1 rebuilds).
set -euo pipefail
cd "$(dirname "$0")"

DEBIAN_IMAGE=localhost/tuneboard-base/debian:bookworm
NODE_IMAGE=localhost/tuneboard-base/node:20
PYTHON_IMAGE=localhost/tuneboard-base/python:3.11
POSTGRES_IMAGE=localhost/tuneboard-base/postgres:15
# The machine's mirror (first URIs:/deb line of its apt sources), so this works wherever apt does.
mirror=${DEBIAN_MIRROR:-$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list 2>/dev/null \
  | grep -m1 -oE 'https?://[^ ]*/debian/?' || true)}
mirror=${mirror:-http://deb.debian.org/debian}
rebuild=${TUNEBOARD_REBUILD_BASE:-0}
have() { [ "$rebuild" != 1 ] && podman image exists "$1"; }

if ! have "$DEBIAN_IMAGE"; then
  command -v debootstrap >/dev/null || { echo "debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
  rootfs=$(mktemp -d /var/tmp/tuneboard-rootfs.XXXXXX)
  trap 'rm -rf "$rootfs"' EXIT
  echo "debootstrap bookworm from $mirror into $rootfs"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" "$mirror" >/tmp/tuneboard-debootstrap.log 2>&1 \
    || { tail -20 /tmp/tuneboard-debootstrap.log >&2; exit 1; }
  # What a slim image leaves out: package lists, caches, manuals, documentation, other locales.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/usr/share/man/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/*.log
  find "$rootfs"/usr/share/locale -mindepth 1 -maxdepth 1 ! -name 'C.UTF-8' -exec rm -rf {} +
  # debootstrap leaves the build machine's resolver behind; the container runtime provides its own.
  : > "$rootfs"/etc/resolv.conf
  tar --numeric-owner -C "$rootfs" -c . | podman import --change 'CMD ["bash"]' - "$DEBIAN_IMAGE" >/dev/null
  rm -rf "$rootfs"; trap - EXIT
  echo "imported $DEBIAN_IMAGE"
fi

# deploy/up.sh imports the root file system alone first, to find out whether podman can run containers here.
[ "${TUNEBOARD_ONLY_DEBIAN:-0}" = 1 ] && exit 0

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

if ! have "$NODE_IMAGE"; then
  node_bin=$(command -v node)
  case "$("$node_bin" --version)" in v20.*) ;; *) echo "need Node.js 20 on this machine to copy (found $("$node_bin" --version))" >&2; exit 1 ;; esac
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")   # …/lib/node_modules/npm
  cp "$node_bin" "$ctx/node"
  cp -a "$npm_dir" "$ctx/npm"
  # The official image's layout: node in /usr/local/bin, npm in /usr/local/lib/node_modules.
  cat > "$ctx/Containerfile" <<'CF'
ARG BASE
FROM ${BASE}
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
CMD ["node"]
CF
  podman build -q --network host --build-arg BASE="$DEBIAN_IMAGE" -t "$NODE_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"/*
  echo "built $NODE_IMAGE"
fi

if ! have "$PYTHON_IMAGE"; then
  cat > "$ctx/Containerfile" <<'CF'
ARG BASE
FROM ${BASE}
# Debian's python3 is 3.11, as in python:3.11-slim-bookworm; python3-venv brings ensurepip for `python3 -m venv`.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /usr/share/doc/* /usr/share/man/* \
 && ln -s /usr/bin/python3 /usr/local/bin/python3 && ln -s /usr/bin/python3 /usr/local/bin/python \
 && python3 --version
CMD ["python3"]
CF
  podman build -q --network host --build-arg BASE="$DEBIAN_IMAGE" -t "$PYTHON_IMAGE" "$ctx" >/dev/null
  echo "built $PYTHON_IMAGE"
fi
if ! have "$POSTGRES_IMAGE"; then
  rm -rf "${ctx:?}"/*
  cp postgres-entrypoint.sh "$ctx/entrypoint.sh"
  cat > "$ctx/Containerfile" <<'CF'
ARG BASE
FROM ${BASE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /usr/share/doc/* /usr/share/man/* \
 && mkdir -p /var/lib/postgresql/data /run/postgresql && chown -R postgres:postgres /var/lib/postgresql /run/postgresql
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
VOLUME /var/lib/postgresql/data
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
CF
  podman build -q --network host --build-arg BASE="$DEBIAN_IMAGE" -t "$POSTGRES_IMAGE" "$ctx" >/dev/null
  echo "built $POSTGRES_IMAGE"
fi
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep tuneboard-base/
