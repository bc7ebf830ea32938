# One image, two processes: run `treasury-api` (default) or `treasury-signer`
# (docker run … node --import tsx signer/main.ts). The signer needs the HSM module and PIN; the API needs
# DATABASE_URL and the signer socket (share a volume for TREASURY_SIGNER_SOCKET).
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ softhsm2 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm_config_nodedir=/usr/local npm ci --omit=dev --no-fund --no-audit
COPY . .

FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends softhsm2 ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --uid 10001 --home /app treasury
WORKDIR /app
COPY --from=build --chown=treasury:treasury /app /app
USER treasury
ENV NODE_ENV=production TREASURY_HOST=0.0.0.0
EXPOSE 8402
STOPSIGNAL SIGTERM
CMD ["node", "--import", "tsx", "src/main.ts"]
