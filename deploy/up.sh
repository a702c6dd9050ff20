#!/usr/bin/env bash
# From a checkout to a running Tuneboard stack with podman, in one command:
#
#   deploy/up.sh                    build what is missing, write deploy/.env if there is none, start the stack
#   deploy/up.sh --profile hf       the same, plus the Python CPU worker (deploy/compose.hf.yaml)
#   deploy/up.sh --profile gpu      the same, plus vLLM and a CUDA worker (deploy/compose.gpu.yaml)
#
# Steps: check that podman can run a container here (else use deploy/podman/restricted.conf, for machines that
# are themselves restricted containers); find the base images (pulled, else built from a Debian root file system
# by base/build-base-images.sh); build the images (server, S3 store, Python worker); write deploy/.env with fresh
# secrets when it is missing; `podman-compose up -d`; wait until /v1/health answers. Rerunning it rebuilds only
# what changed (layer cache) and restarts only changed containers.
#
# Settings (environment): TUNEBOARD_BASE=auto|official|local (base images: pull, else build locally), TUNEBOARD_BUILD_CA (a
# CA bundle for the npm registry behind a TLS-inspecting proxy; default: this machine's, when it has one),
# TUNEBOARD_SKIP_BUILD=1 (start with the images as they are), TUNEBOARD_BUILD_PYTHON=0 (skip the Python worker image).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
say() { echo "== $*"; }

command -v podman >/dev/null || { echo "podman is required (apt-get install podman podman-compose)" >&2; exit 1; }
if command -v podman-compose >/dev/null; then compose=(podman-compose); else compose=(podman compose); fi
# -p: podman-compose 1.0.3 ignores the file's `name:`; the containers are tuneboard_<service>_1.
compose+=(-p tuneboard -f "$root/deploy/compose.yaml")
# A profile is a file added with -f: podman-compose 1.0.3 (Debian 12's) has no `profiles:` and would start them all.
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) [ -f "deploy/compose.$2.yaml" ] || { echo "no profile $2 (deploy/compose.$2.yaml)" >&2; exit 2; }
               compose+=(-f "$root/deploy/compose.$2.yaml"); shift 2 ;;
    *) echo "usage: deploy/up.sh [--profile hf|gpu]…" >&2; exit 2 ;;
  esac
done

OFFICIAL_NODE=docker.io/library/node:20-bookworm-slim
OFFICIAL_PYTHON=docker.io/library/python:3.11-slim-bookworm
OFFICIAL_POSTGRES=docker.io/library/postgres:15-bookworm
LOCAL_NODE=localhost/tuneboard-base/node:20
LOCAL_PYTHON=localhost/tuneboard-base/python:3.11
LOCAL_POSTGRES=localhost/tuneboard-base/postgres:15

# 1. Base images: the official ones when present or pullable, else local stand-ins (no registry needed).
base=${TUNEBOARD_BASE:-auto}
available() { podman image exists "$1" || timeout 300 podman pull -q "$1" >/dev/null 2>&1; }
if [ "$base" = auto ]; then
  if available "$OFFICIAL_NODE" && available "$OFFICIAL_PYTHON" && available "$OFFICIAL_POSTGRES"; then base=official; else base=local; fi
fi
if [ "$base" = official ]; then
  node_image=$OFFICIAL_NODE python_image=$OFFICIAL_PYTHON postgres_image=$OFFICIAL_POSTGRES
else
  say "base images: local stand-ins (deploy/base/build-base-images.sh)"
  # The first container this script runs decides whether podman needs the restricted machine's settings.
  if [ -z "${CONTAINERS_CONF:-}" ] && ! podman image exists localhost/tuneboard-base/debian:bookworm; then
    # Importing the root file system runs no container; building the rest does, so probe in between.
    TUNEBOARD_ONLY_DEBIAN=1 bash deploy/base/build-base-images.sh
  fi
  node_image=$LOCAL_NODE python_image=$LOCAL_PYTHON postgres_image=$LOCAL_POSTGRES
fi

probe_image=$([ "$base" = official ] && echo "$OFFICIAL_NODE" || echo localhost/tuneboard-base/debian:bookworm)
if [ -z "${CONTAINERS_CONF:-}" ] && ! podman run --rm --network none "$probe_image" true 2>/tmp/tuneboard-probe.err; then
  export CONTAINERS_CONF=$root/deploy/podman/restricted.conf
  if podman run --rm --network none "$probe_image" true 2>>/tmp/tuneboard-probe.err; then
    say "podman could not run a container with its defaults; using deploy/podman/restricted.conf (docs/deploy.md)"
  else
    echo "podman cannot run a container on this machine (restricted.conf needs runc: apt-get install runc):" >&2
    cat /tmp/tuneboard-probe.err >&2; exit 1
  fi
fi
[ "$base" = official ] || bash deploy/base/build-base-images.sh

# 2. The images. --format docker keeps each image's HEALTHCHECK (the OCI format has no such field).
build=(podman build --format docker --network host)
ca=${TUNEBOARD_BUILD_CA-/etc/ssl/certs/ca-certificates.crt}
npm_ca=()
[ -n "$ca" ] && [ -f "$ca" ] && npm_ca=(-v "$ca:/run/tuneboard-build-ca.crt:ro" --build-arg NPM_CAFILE=/run/tuneboard-build-ca.crt)
if [ "${TUNEBOARD_SKIP_BUILD:-0}" != 1 ]; then
  say "building localhost/tuneboard/s3"
  "${build[@]}" -q "${npm_ca[@]}" --build-arg NODE_IMAGE="$node_image" -t localhost/tuneboard/s3:latest deploy/s3 >/dev/null
  say "building localhost/tuneboard/server (a few minutes the first time)"
  "${build[@]}" "${npm_ca[@]}" --build-arg NODE_IMAGE="$node_image" -t localhost/tuneboard/server:latest . \
    > /tmp/tuneboard-build-server.log 2>&1 || { tail -40 /tmp/tuneboard-build-server.log >&2; exit 1; }
  if [ "${TUNEBOARD_BUILD_PYTHON:-1}" = 1 ]; then
    say "building localhost/tuneboard/worker-python (CPU)"
    # pip's indexes: this machine's own when they are local folders (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL,
    # PIP_FIND_LINKS as file:// or paths), mounted for the install step only; else PyPI and PyTorch's CPU index.
    pip_mounts=() pip_opts=() local_index=0
    local_dir() { case "$1" in file://*) echo "${1#file://}" ;; /*) echo "$1" ;; esac; }
    for url in ${PIP_INDEX_URL:-}; do
      d=$(local_dir "$url") && [ -n "$d" ] && local_index=1 && pip_mounts+=(-v "$(dirname "$d"):$(dirname "$d"):ro") && pip_opts+=(--index-url "$url")
    done
    for url in ${PIP_EXTRA_INDEX_URL:-}; do
      d=$(local_dir "$url") && [ -n "$d" ] && pip_mounts+=(-v "$(dirname "$d"):$(dirname "$d"):ro") && pip_opts+=(--extra-index-url "$url")
    done
    for dir in ${PIP_FIND_LINKS:-}; do
      d=$(local_dir "$dir") && [ -n "$d" ] && pip_mounts+=(-v "$d:$d:ro") && pip_opts+=(--find-links "$d")
    done
    py_args=()
    if [ "$local_index" = 1 ]; then
      # Everything comes from the local folders: the install step needs no network at all.
      py_args=(--network none --build-arg "PIP_OPTIONS=${pip_opts[*]}" --build-arg "TORCH_OPTIONS=${pip_opts[*]}")
      # A local CPU build of torch, if the folders have one (a plain "torch" could resolve to a CUDA build).
      cpu_wheel=$(for d in ${PIP_FIND_LINKS:-}; do ls "$(local_dir "$d")"/torch-*+cpu-*.whl 2>/dev/null; done | sort -V | tail -1)
      [ -n "$cpu_wheel" ] && py_args+=(--build-arg "TORCH_SPEC=torch==$(basename "$cpu_wheel" | cut -d- -f2)")
    else
      pip_mounts=()   # PyPI, and PyTorch's CPU index for torch (the Dockerfile's defaults)
    fi
    "${build[@]}" "${pip_mounts[@]}" "${py_args[@]}" --build-arg BASE_IMAGE="$python_image" \
      -t localhost/tuneboard/worker-python:latest workers/python > /tmp/tuneboard-build-worker.log 2>&1 \
      || { tail -40 /tmp/tuneboard-build-worker.log >&2; exit 1; }
  fi
  # No `podman image prune` here: it would also drop the build cache (untagged intermediate images), and the next
  # run would build everything again. docs/deploy.md ("Sizing") says when to prune.
fi

# 3. Settings: deploy/.env with fresh secrets when there is none.
if [ ! -f deploy/.env ]; then
  # Fresh secrets would not open the volumes of an earlier stack: PostgreSQL keeps the password its data folder was
  # created with (POSTGRES_PASSWORD is read only then), and every start would fail with "password authentication
  # failed". Say so instead of writing a .env that cannot work.
  if podman volume exists tuneboard_pgdata 2>/dev/null; then
    echo "deploy/.env is missing, but an earlier stack's volumes exist (tuneboard_pgdata, made with the secrets of" >&2
    echo "that .env). Put that deploy/.env back, or start afresh, deleting their data:" >&2
    echo "  podman volume rm tuneboard_pgdata tuneboard_s3data" >&2
    exit 1
  fi
  secret() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
  while IFS= read -r line; do
    case "$line" in *=change-me) echo "${line%change-me}$(secret)" ;; *) echo "$line" ;; esac
  done < deploy/.env.example > deploy/.env
  chmod 600 deploy/.env
  say "wrote deploy/.env with fresh secrets"
fi
grep -q '=change-me$' deploy/.env && { echo "deploy/.env still has change-me values" >&2; exit 1; }

# 4. Start, and wait until the server answers.
export POSTGRES_IMAGE=${POSTGRES_IMAGE:-$postgres_image}
# --force-recreate: podman-compose 1.0.3 leaves an existing container as it was (old image, old settings) and
# only starts it; this takes the stack down first (volumes stay) and creates every container anew.
say "starting the stack (${compose[*]} up -d --force-recreate)"
"${compose[@]}" up -d --force-recreate > /tmp/tuneboard-compose-up.log 2>&1 || { tail -40 /tmp/tuneboard-compose-up.log >&2; exit 1; }
port=$(grep -E '^TUNEBOARD_PORT=' deploy/.env | cut -d= -f2); port=${port:-3000}
bind=$(grep -E '^TUNEBOARD_BIND=' deploy/.env | cut -d= -f2); bind=${bind:-127.0.0.1}
[ "$bind" = 0.0.0.0 ] && bind=127.0.0.1
for _ in $(seq 180); do
  # Ready: the system check passes (database, job queue) and the server reaches the store.
  if podman exec tuneboard_tuneboard_1 node -e "Promise.all([fetch('http://127.0.0.1:3000/v1/system-check'),fetch('http://s3:9000/_health')]).then(rs=>process.exit(rs.every(r=>r.ok)?0:1),()=>process.exit(1))" 2>/dev/null; then
    say "Tuneboard is up: http://$bind:$port (sign up there; docs/deploy.md)"
    exit 0
  fi
  sleep 1
done
echo "Tuneboard did not become ready within 3 minutes; its log:" >&2
podman logs --tail 40 tuneboard_tuneboard_1 >&2
exit 1
