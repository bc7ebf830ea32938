/**
 * Where the CLI keeps its files (docs/cli.md, "Files"): a root (XX_HOME, default ~/.xx) and one override per file or
 * directory — XX_SESSION_PATH, XX_CREDENTIALS_PATH, XX_SERVICES_DIR, XX_ACTIVE_SERVICE_PATH, XX_AGENTS_DIR,
 * XX_ACTIVE_AGENT_PATH, XX_SEEDS_DIR, XX_CONFIG_PATH. Env files for XX_ENV live in `<root>/env/<name>.env`;
 * `xx buy`'s purchases in `<root>/purchases/` (../commands/buy/buy-purchases.ts).
 */
import os from 'node:os';
import path from 'node:path';

export interface CliPaths {
  root: string;
  session: string;
  credentials: string;
  servicesDir: string;
  activeService: string;
  agentsDir: string;
  activeAgent: string;
  seedsDir: string;
  config: string;
  envDir: string;
  /** `xx buy`'s purchases still unsettled (their payment identifier and signed payment), one file each. */
  purchasesDir: string;
}

export function resolveCliPaths(env: NodeJS.ProcessEnv = process.env): CliPaths {
  const root = env.XX_HOME || path.join(env.HOME || os.homedir(), '.xx');
  return {
    root,
    session: env.XX_SESSION_PATH || path.join(root, 'session.json'),
    credentials: env.XX_CREDENTIALS_PATH || path.join(root, 'credentials.json'),
    servicesDir: env.XX_SERVICES_DIR || path.join(root, 'services'),
    activeService: env.XX_ACTIVE_SERVICE_PATH || path.join(root, 'active-service'),
    agentsDir: env.XX_AGENTS_DIR || path.join(root, 'agents'),
    activeAgent: env.XX_ACTIVE_AGENT_PATH || path.join(root, 'active-agent'),
    seedsDir: env.XX_SEEDS_DIR || path.join(root, 'seeds'),
    config: env.XX_CONFIG_PATH || path.join(root, 'config.json'),
    envDir: path.join(root, 'env'),
    purchasesDir: path.join(root, 'purchases'),
  };
}
