# The Tuneboard server (and the Node.js training worker for the built-in models, from the same image).
#   podman build --format docker -t tuneboard/server .        (docker build works the same)
# --format docker keeps HEALTHCHECK, which the OCI image format has no field for. deploy/up.sh builds it with the
# base images and build-time mounts this machine needs; docs/deploy.md explains each setting.
#
# Stages: deps (npm install with dev dependencies, which the build needs) → build (Next's standalone output plus what
# it does not trace, assembled by scripts/assemble-standalone.mjs) → runtime (node, the assembled folder, a
# non-root user; no npm cache, no dev dependencies, no compilers).
ARG NODE_IMAGE=docker.io/library/node:20-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
# NPM_CAFILE: a CA bundle mounted at build time when the registry is reached through a TLS-inspecting proxy.
# `npm install`, not `npm ci`: the lockfile leaves out other platforms' optional builds (see
# scripts/check-lockfile.mjs), which `npm ci` refuses as "out of sync"; the lockfile's versions are still the ones
# installed. Install scripts are skipped: nothing the build or the server uses needs one (esbuild and Next's compiler come
# as prebuilt optional packages), and the ones that exist (node-llama-cpp, a benchmark's dev dependency) would
# download or compile.
ARG NPM_CAFILE=
RUN --mount=type=cache,target=/root/.npm \
    npm install --ignore-scripts --no-audit --no-fund ${NPM_CAFILE:+--cafile="$NPM_CAFILE"}

FROM deps AS build
COPY . .
# TUNEBOARD_STANDALONE=1 turns on Next's standalone output (next.config.mjs); types are checked by CI, not here.
ENV NEXT_TELEMETRY_DISABLED=1 TUNEBOARD_STANDALONE=1 TUNEBOARD_SKIP_BUILD_TYPECHECK=1
RUN npm run build && node scripts/assemble-standalone.mjs /out

FROM ${NODE_IMAGE} AS runtime
RUN groupadd --system --gid 10001 tuneboard \
 && useradd --system --uid 10001 --gid tuneboard --home-dir /app --shell /usr/sbin/nologin tuneboard \
 && mkdir -p /data /adapters && chown tuneboard:tuneboard /data /adapters
WORKDIR /app
COPY --from=build /out/ ./
# Everything that persists is under /data: the embedded database (when DATABASE_URL is unset) and the local
# artifact store (when TUNEBOARD_S3_* is unset). HOSTNAME: the standalone server binds to it, and a container's
# own HOSTNAME is its id. KEEP_ALIVE_TIMEOUT and MALLOC_*: what `npm start` sets (package.json).
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 HOSTNAME=0.0.0.0 PORT=3000 KEEP_ALIVE_TIMEOUT=65000 \
    MALLOC_MMAP_THRESHOLD_=1048576 MALLOC_TRIM_THRESHOLD_=8388608 \
    TUNEBOARD_DATA_DIR=/data/pglite TUNEBOARD_ARTIFACT_DIR=/data/artifacts
USER tuneboard
VOLUME ["/data"]
EXPOSE 3000
# /v1/health answers ahead of Next's routing, even while migrations run (lib/api/fast-path.ts).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Migrations are applied by the server as it starts (instrumentation.ts), under a PostgreSQL advisory lock, so
# several replicas may start at once. The Node.js training worker: `node .tuneboard/worker.mjs`.
CMD ["node", "server.js"]
