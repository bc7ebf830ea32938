/**
 * The node flags treasury-api and treasury-signer run with, wherever this project starts them (`npm start`,
 * the benchmark; the Dockerfile sets the same through NODE_OPTIONS).
 *
 * --max-semi-space-size=64: a larger young generation (V8's default semi-space is 16 MiB). Both services
 * allocate short-lived objects per request (HTTP and PostgreSQL messages, JSON, EIP-712 encoding); fewer
 * scavenges promote fewer of them. Measured in `npm run bench`: CPU per payment 8–15 % lower in the API and
 * the signer at a steady 400 pays/s. Costs up to ≈ 190 MiB more resident memory per process under load.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
