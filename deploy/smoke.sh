#!/usr/bin/env bash
# The deployment smoke test, against the stack deploy/up.sh started (run that first):
#   deploy/smoke.sh
# Through the stack: sign up, a key, a model of the built-in tiny-chat, an SFT job trained by the worker
# container, a chat with its checkpoint (deploy/smoke.mjs, run with the server container's node, so this machine
# needs only podman); then the checkpoint's object in the S3 container; then the stack is taken down and started
# again (volumes kept) and everything is checked once more. Exit status 0 only if every step passed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if command -v podman-compose >/dev/null; then compose=(podman-compose); else compose=(podman compose); fi
compose+=(-p tuneboard -f "$root/deploy/compose.yaml")
server=tuneboard_tuneboard_1 worker=tuneboard_worker_1 s3=tuneboard_s3_1
bucket=$(grep -E '^S3_BUCKET=' deploy/.env | cut -d= -f2); bucket=${bucket:-tuneboard}
port=$(grep -E '^TUNEBOARD_PORT=' deploy/.env | cut -d= -f2); port=${port:-3000}
started=$(date +%s)
say() { echo "== [$(( $(date +%s) - started )) s] $*"; }
fail() { echo "SMOKE TEST FAILED: $*" >&2; exit 1; }
# deploy/up.sh chose these; the same choice is needed to run podman here and to start the stack again.
[ -z "${CONTAINERS_CONF:-}" ] && ! podman run --rm --network none localhost/tuneboard/s3:latest true 2>/dev/null \
  && export CONTAINERS_CONF=$root/deploy/podman/restricted.conf
if [ -z "${POSTGRES_IMAGE:-}" ]; then
  export POSTGRES_IMAGE=$(podman inspect --format '{{.ImageName}}' tuneboard_postgres_1 2>/dev/null || true)
fi

wait_ready() {
  for _ in $(seq 180); do
    # Ready: the server answers its system check (database, job queue) and reaches the store. Right after a
    # restart, connections between the containers were seen to hang for some seconds on the test machine.
    podman exec "$server" node -e "Promise.all([fetch('http://127.0.0.1:3000/v1/system-check'),fetch('http://s3:9000/_health')]).then(rs=>process.exit(rs.every(r=>r.ok)?0:1),()=>process.exit(1))" 2>/dev/null && return 0
    sleep 1
  done
  podman logs --tail 30 "$server" >&2; fail "the server did not become ready"
}
smoke() { podman exec -i "$server" node --input-type=module - "$@" < deploy/smoke.mjs; }

say "containers"
podman ps --filter label=io.podman.compose.project=tuneboard --format '{{.Names}}  {{.Image}}  {{.Status}}  {{.Ports}}'
wait_ready
if command -v curl >/dev/null; then
  say "from this machine: http://127.0.0.1:$port/v1/health → $(curl -sS "http://127.0.0.1:$port/v1/health")"
fi

say "sign up, key, model, dataset, SFT job, chat"
out=$(smoke run http://127.0.0.1:3000) || { echo "$out"; fail "the HTTP run failed"; }
echo "$out" | grep -v '^STATE \|^CHECKPOINT \|^WORKER '
state=$(echo "$out" | sed -n 's/^STATE //p')
read -r key bytes < <(echo "$out" | sed -n 's/^CHECKPOINT //p')
claimed=$(echo "$out" | sed -n 's/^WORKER //p')
job=$(echo "$key" | cut -d/ -f4)

say "the job was trained in the worker container"
# A worker names itself <host name>:<pid>; the worker container's host name is its id.
host=$(podman inspect "$worker" --format '{{.Config.Hostname}}')
case "$claimed" in "$host":*) ;; *) fail "job $job was claimed by '${claimed}', not by $worker (host name $host)" ;; esac
echo "job $job was claimed by $claimed: $worker (host name $host); the server starts no training process (TUNEBOARD_RUNNER_CONCURRENCY=0)"

say "the checkpoint is in the S3 container"
object="/data/$bucket/$key._S3rver_object"
size=$(podman exec "$s3" stat -c %s "$object") || fail "$object is not in $s3"
echo "$s3:$object: $size bytes"
[ "$size" = "$bytes" ] || fail "the stored object has $size bytes, the download $bytes"
podman exec "$server" sh -c 'ls /data/artifacts 2>/dev/null | head -1' | grep -q . && fail "the server wrote artifacts to its local folder"
echo "the server's local artifact folder is empty (artifacts go to S3)"

say "restart: down, then up (volumes kept)"
"${compose[@]}" down > /tmp/tuneboard-smoke-down.log 2>&1 || { cat /tmp/tuneboard-smoke-down.log; fail "down failed"; }
[ -z "$(podman ps -q --filter label=io.podman.compose.project=tuneboard)" ] || fail "containers still running after down"
echo "no container of the stack is running"
"${compose[@]}" up -d > /tmp/tuneboard-smoke-up.log 2>&1 || { cat /tmp/tuneboard-smoke-up.log; fail "up failed"; }
wait_ready
say "after the restart"
smoke verify http://127.0.0.1:3000 "$state" || fail "something was lost in the restart"
say "smoke test passed"
