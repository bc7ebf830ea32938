# One image, two processes, two users.
#   docker build -t treasury .                          → treasury-api    (node --import tsx src/api/main.ts), user treasury
#   docker build -t treasury-signer --target signer .   → treasury-signer (node --import tsx signer/main.ts), user treasury-signer
# The code in /app belongs to root and neither user can change it: a compromised API cannot rewrite the
# signer it would then restart. The signer's HSM token and PINs live in /var/lib/treasury-signer (0700,
# treasury-signer): only the signer's user may read them (the signer also refuses a PIN file other users
# can read), and so do the signer's per-wallet limit windows, kept across restarts. Mount a volume there
# (a named volume takes the directory's owner and mode; a bind mount keeps the host's: chown it to 10002 and
# chmod 0700) and initialise the token once, as that user:
#   docker run --rm -v signer-hsm:/var/lib/treasury-signer treasury-signer \
#     node --import tsx ops/softhsm/init-token.ts --dir /var/lib/treasury-signer/softhsm
# The socket lives in /run/treasury (2750 treasury-signer:treasury): share that directory as a volume with the
# API; the socket is created 0660 in group treasury, so the API's user can connect and no other user can.
# The API needs DATABASE_URL; its own data directory is /var/lib/treasury (0700, treasury).
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ softhsm2 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm_config_nodedir=/usr/local npm ci --omit=dev --no-fund --no-audit
COPY . .

FROM node:20-bookworm-slim AS runtime
RUN apt-get update && apt-get install -y --no-install-recommends softhsm2 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 treasury \
    && useradd --system --uid 10001 --gid treasury --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin treasury \
    && groupadd --system --gid 10002 treasury-signer \
    && useradd --system --uid 10002 --gid treasury-signer --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin treasury-signer \
    && install -d -o treasury-signer -g treasury-signer -m 0700 /var/lib/treasury-signer \
    && install -d -o treasury-signer -g treasury -m 2750 /run/treasury \
    && install -d -o treasury -g treasury -m 0700 /var/lib/treasury
WORKDIR /app
COPY --from=build /app /app
ENV NODE_ENV=production TREASURY_SIGNER_SOCKET=/run/treasury/signer.sock
STOPSIGNAL SIGTERM

FROM runtime AS signer
ENV TREASURY_SIGNER_SOCKET_MODE=0660 \
    SOFTHSM2_CONF=/var/lib/treasury-signer/softhsm/softhsm2.conf \
    TREASURY_PKCS11_PIN_FILE=/var/lib/treasury-signer/softhsm/user.pin \
    TREASURY_SIGNER_LIMITS_STATE_FILE=/var/lib/treasury-signer/limits-state.json
VOLUME ["/var/lib/treasury-signer", "/run/treasury"]
USER treasury-signer
CMD ["node", "--import", "tsx", "signer/main.ts"]

FROM runtime AS api
ENV TREASURY_HOST=0.0.0.0 TREASURY_DATA_DIR=/var/lib/treasury
VOLUME ["/run/treasury"]
USER treasury
EXPOSE 8402
CMD ["node", "--import", "tsx", "src/api/main.ts"]
