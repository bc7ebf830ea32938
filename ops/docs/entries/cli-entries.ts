/** The xx CLI's variables (src/cli/), read directly: listed here whole, for docs/configuration.md. */
import type { Entries } from './entry.js';

export const CLI_ENTRIES: Entries = {
  XX_API_URL: { meaning: 'the Treasury API the CLI talks to', default: 'the sandbox, `http://127.0.0.1:8402`' },
  XX_ENV: { meaning: '`dev`, `qa`, `preprod` or `prod`: which env file under `<home>/env/` applies', default: '`dev`' },
  XX_HOME: { meaning: "the CLI's home directory", default: '`~/.xx`' },
  HOME: { meaning: 'where `~/.xx` is when `XX_HOME` is unset' },
  XX_SESSION_PATH: { meaning: 'the session file', default: '`<home>/session.json`' },
  XX_CREDENTIALS_PATH: { meaning: 'the credentials file', default: '`<home>/credentials.json`' },
  XX_SERVICES_DIR: { meaning: "sellers' service directories", default: '`<home>/services`' },
  XX_ACTIVE_SERVICE_PATH: { meaning: 'which service is active', default: '`<home>/active-service`' },
  XX_AGENTS_DIR: { meaning: "agents' directories", default: '`<home>/agents`' },
  XX_ACTIVE_AGENT_PATH: { meaning: 'which agent is active', default: '`<home>/active-agent`' },
  XX_SEEDS_DIR: { meaning: 'encrypted seed keystores', default: '`<home>/seeds`' },
  XX_CONFIG_PATH: { meaning: 'the CLI config file', default: '`<home>/config.json`' },
  XX_MNEMONIC: { meaning: 'the recovery phrase to restore from, instead of the hidden prompt' },
  XX_KEYSTORE_PASSPHRASE: { meaning: 'the keystore passphrase, for non-interactive use' },
  XX_PAT: {
    meaning:
      'an agent PAT every buyer command and `xx mcp` use (precedence: `--profile` > `XX_PAT` > active profile > active agent)',
  },
  XX_MCP_ALLOW_PRIVATE_TARGETS: {
    meaning:
      '`1`: the `xx mcp` pay tool may reach loopback and private sellers, as `--allow-private-targets` (sandbox and tests only)',
  },
  XX_MCP_HTTP_TOKEN: {
    meaning:
      'the bearer `xx mcp --http` asks of every request, for a client config that survives restarts (32–1024 printable ASCII characters, no spaces; never printed)',
    default: 'a random token made at each launch, shown to whoever started it',
  },
  XX_RPC_URL: {
    meaning:
      "the EVM RPC a self-custody command reads and pays through (default: the sandbox chain, else the chain's public RPC)",
  },
  XX_BUY_MAX_USD: {
    meaning:
      "`xx buy`'s price ceiling when `--max` is not given (before the profile's `buy_max_usd` and the built-in 1.00 USD); never unbounded",
  },
  XX_SOLANA_RPC_URL: {
    meaning:
      "the Solana RPC a self-custody payment reads the mint and blockhash through (default: the sandbox's, else the network's public RPC; loopback only in the sandbox)",
  },
  XX_KEYSTORE_SCRYPT_LOG_N: {
    meaning: 'keystore scrypt cost (log2 N); below the default refused under `XX_ENV=prod`/`preprod`',
  },
  XX_DASHBOARD_URL: {
    meaning: 'the dashboard `xx dashboard` opens',
    default: "the config's `dashboard_url`, else the API's",
  },
  XX_USE_SOURCES: { meaning: '`1`: run the TypeScript sources even when a current `dist/` build exists (bin/xx.mjs)' },
  CI: { meaning: 'set: never open a browser or prompt' },
  TREASURY_DATA_DIR: { meaning: '`xx fund`: where the sandbox wrote `sandbox.json`', default: '`.treasury`' },
};
