/**
 * One example line for every `xx` command, shown at the end of its `--help` ("Example: …"). Applied by
 * walking the tree after its modules register (src/cli/program.ts), so the command files keep their shape.
 *
 * What keeps it honest: test/unit/cli/cli-tree.test.ts walks the whole tree and fails on a command with no
 * description or no example here, and on an example here whose command no longer exists.
 */
import type { Command } from 'commander';

export const COMMAND_EXAMPLES: Readonly<Record<string, string>> = {
  init: 'xx init --server https://treasury.example.com --chain base --daily-cap 5',
  login: 'printf %s "$XX_PAT" | xx login --token - --profile ci',
  whoami: 'xx whoami --profile ci --json',
  logout: 'xx logout --all',
  profile: 'xx profile list',
  'profile list': 'xx profile list --json',
  'profile switch': 'xx profile switch ci',
  'profile delete': 'xx profile delete old-laptop',
  pat: 'xx pat list',
  'pat list': 'xx pat list --json',
  'pat create': 'xx pat create --label ci-agent --daily-cap 5 --expires-in 86400',
  'pat update': 'xx pat update pat_0123 --daily-cap none',
  'pat revoke': 'xx pat revoke pat_0123',
  dashboard: 'xx dashboard --print',
  agent: 'xx agent list',
  'agent list': 'xx agent list --json',
  'agent show': 'xx agent show research-bot',
  'agent switch': 'xx agent switch research-bot',
  'agent label': 'xx agent label ag_0123 research-bot',
  'agent delete': 'xx agent delete research-bot --yes',
  'agent wallets': 'xx agent wallets list',
  'agent wallets list': 'xx agent wallets list --json',
  'agent wallets add': 'xx agent wallets add --chain base-sepolia --label travel',
  wallet: 'xx wallet list',
  'wallet generate': 'xx wallet generate --name cold --words 24',
  'wallet import': 'xx wallet import --name restored',
  'wallet list': 'xx wallet list --json',
  'wallet balance': 'xx wallet balance cold',
  'wallet export': 'xx wallet export --name cold --yes',
  'wallet delete': 'xx wallet delete --name cold --yes',
  'wallet policy': 'xx wallet policy show',
  'wallet policy show': 'xx wallet policy show wal_0123 --json',
  'wallet policy set': 'xx wallet policy set wal_0123 --max-per-payment 2 --daily-limit 20 --key-destruction allow',
  'wallet policy verify': 'xx wallet policy verify wal_0123 --json',
  'wallet rotate': 'xx wallet rotate wal_0123 --yes',
  'wallet revoke': 'xx wallet revoke wal_0123 --abandon-balance --yes',
  fund: 'xx fund --testnet --amount 5',
  buy: 'xx buy https://api.example.com/weather?city=Paris --max 0.05',
  service: 'xx service show',
  'service init': 'xx service init --name Weather --openapi-url https://api.example.com/openapi.json',
  'service show': 'xx service show --json',
  'service list': 'xx service list --remote',
  'service switch': 'xx service switch weather',
  'service suspend': 'xx service suspend',
  'service resume': 'xx service resume',
  'service banking': 'xx service banking status',
  'service banking set': 'xx service banking set --legal-entity "Weather Ltd" --country GB',
  'service banking status': 'xx service banking status --json',
  'service payouts': 'xx service payouts --flush',
  'service pat': 'xx service pat list',
  'service pat create': 'xx service pat create --label deploy --expires-in 2592000',
  'service pat list': 'xx service pat list --json',
  'service pat revoke': 'xx service pat revoke pat_0123',
  endpoints: 'xx endpoints list',
  'endpoints list': 'xx endpoints list --json',
  'endpoints add': 'xx endpoints add --path /weather --method GET --price 0.01',
  'endpoints price': 'xx endpoints price ep_0123 0.02',
  'endpoints update': 'xx endpoints update ep_0123 --capability weather',
  ledger: 'xx ledger list --limit 20',
  'ledger list': 'xx ledger list --from 2026-11-01 --limit 20',
  'ledger revenue': 'xx ledger revenue --from 2026-11-01 --to 2026-11-30',
  'ledger export': 'xx ledger export --format csv --out ledger.csv',
  status: 'xx status --json',
  'payout-mode': 'xx payout-mode show',
  'payout-mode set': 'xx payout-mode set direct',
  'payout-mode show': 'xx payout-mode show --json',
  verify: 'xx verify --origin https://api.example.com',
  refresh: 'xx refresh',
  keys: 'xx service pat create --label deploy   (keys are deprecated)',
  'keys list': 'xx service pat list   (instead of xx keys list)',
  'keys create': 'xx service pat create --label deploy   (instead of xx keys create)',
  'keys revoke': 'xx service pat revoke pat_0123   (instead of xx keys revoke)',
  'keys rotate': 'xx service pat create --label deploy   (instead of xx keys rotate)',
  history: 'xx history --limit 20 --json',
  discover: 'xx discover "weather forecast" --limit 5',
  mcp: 'XX_PAT=xx_pat_… xx mcp --http 127.0.0.1:8765',
  completion: 'source <(xx completion bash)   or   xx completion fish | source',
};

/** The words of `cmd` from the root (`'pat create'`). */
export function commandPath(cmd: Command): string {
  const words: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

/** Adds each command's example (from COMMAND_EXAMPLES) to the end of its help, below `program`. */
export function addExamples(program: Command): void {
  const walk = (cmd: Command) => {
    for (const sub of cmd.commands) {
      const example = COMMAND_EXAMPLES[commandPath(sub)];
      if (example) sub.addHelpText('after', `\nExample:\n  ${example}`);
      walk(sub);
    }
  };
  walk(program);
}
