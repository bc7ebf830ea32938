/**
 * What `npm test` builds once, beside the checks, before the suites start (ops/test/run-tests.sh): the sandbox
 * chain's contracts (TestUsdc, Permit2 and the x402 upto proxy) compiled into the repository's cache
 * (./.treasury/cache), and the dashboard (.build/dashboard/) when stale. Without it the suites and sandboxes
 * that need them each load solc or Vite and build the same thing at the same time, seconds of CPU each.
 * Does not: deploy anything, start anything, or build dist/ (run-tests.sh runs `npm run build` beside it).
 */
import { compileTestUsdc, DEFAULT_CACHE_DIR } from '../sandbox/chain/compile-test-usdc.js';
import { compileUptoContracts } from '../sandbox/chain/compile-upto-contracts.js';
import { ensureDashboardBuilt } from '../dashboard/build-dashboard.js';

compileTestUsdc();
compileUptoContracts();
process.stdout.write(`sandbox contracts: in ${DEFAULT_CACHE_DIR}\n`);
process.stdout.write((await ensureDashboardBuilt()) ? 'dashboard: built\n' : 'dashboard: current\n');
