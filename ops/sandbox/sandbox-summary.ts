/**
 * What `npm start` prints once the sandbox is up: where the API, the dashboard, the metrics, the chain, the
 * facilitator, the demo seller, the gate and the faucet are, the operator token, and a first command to try.
 * The operator token is printed on purpose: it is the sandbox's own, generated on this machine.
 * Does not: print any other secret.
 */
import { say } from './sandbox-settings.js';
import type { StartedSandbox } from './sandbox-parts.js';

function sayChain(s: StartedSandbox): void {
  const { localChain, demoSeller } = s.parts;
  if (!localChain) return;
  say(`  chain          : ${localChain.rpcUrl} (chain id ${localChain.chainId}, test USDC ${localChain.usdc})`);
  say(`  facilitator    : ${localChain.facilitatorUrl}`);
  if (demoSeller) {
    say(`  demo seller    : ${demoSeller.url}/joke (402 until paid)`);
    say(
      `  merchant of record: buyers pay ${demoSeller.collectTo} (held by Treasury); a payout flush moves it to ${demoSeller.payTo}`,
    );
  }
  if (s.gate)
    say(`  gate           : ${s.gate.demoUrl} (402 until paid; origin ${s.gate.originUrl} has no payment code)`);
  say(
    `  faucet         : curl -s -X POST ${localChain.faucetUrl} -H 'content-type: application/json' -d '{"address":"0x…","amount_usd":"10"}'`,
  );
}

function saySolana(s: StartedSandbox): void {
  const { solana } = s.parts;
  if (!solana) return;
  say(`  solana         : ${solana.chain.rpcUrl} (${solana.chain.network}, USDC ${solana.chain.mint})`);
  say(
    `  solana x402    : facilitator ${solana.chain.facilitatorUrl}; demo seller ${solana.demoSellerUrl} (402 until paid)`,
  );
  say(
    `  solana faucet  : curl -s -X POST ${solana.faucetUrl} -H 'content-type: application/json' -d '{"address":"<base58>","amount_usd":"10"}'`,
  );
}

export function saySummary(s: StartedSandbox): void {
  const { apiUrl, adminToken, dashboardUrl, sandboxFile } = s;
  const { kmsEmulator } = s.parts;
  say('');
  say(`Treasury is running at ${apiUrl}`);
  say(`  operator token : ${adminToken}`);
  say(`  dashboard      : ${dashboardUrl}/   (sign in with a browser wallet, or run \`xx dashboard\`)`);
  say(`  metrics        : ${apiUrl}/metrics   readiness: ${apiUrl}/readyz`);
  say(
    kmsEmulator
      ? `  key backend    : aws-kms on the KMS emulator at ${kmsEmulator.url} (TEST DOUBLE: keys in its memory; faults: ${kmsEmulator.url}/__emulator/faults)`
      : '  key backend    : pkcs11 (SoftHSM)',
  );
  sayChain(s);
  saySolana(s);
  say(`  sandbox file   : ${sandboxFile}`);
  say(
    `  try            : curl -s -X POST ${apiUrl}/v1/treasury -H "Authorization: Bearer $(jq -r .admin_token ${sandboxFile})" -H 'content-type: application/json' -d '{"owner_type":"agent","owner_id":"demo"}'`,
  );
  say('Press Ctrl-C to stop.');
}
