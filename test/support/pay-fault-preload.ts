/**
 * Preload for a spawned treasury-api (`node --import tsx --import ./test/support/pay-fault-preload.ts
 * src/api/main.ts`): reads TREASURY_TEST_PAY_FAULT and installs the matching hook through the test seam
 * src/api/pay/pay-fault-hooks.ts, which SIGKILLs the process at that point of every pay:
 *   kill_after_pay_commit   the signature is recorded, the response not sent;
 *   kill_after_pay_reserve  a reservation committed unsigned, before the signer is asked;
 *   kill_after_pay_sign     a signature came back for a payment not yet written.
 * The production configuration knows none of this: without this preload the variable is ignored.
 */
import { installPayFaultHooks, type PayFaultHooks } from '../../src/api/pay/pay-fault-hooks.js';

const FAULTS: Record<string, keyof PayFaultHooks> = {
  kill_after_pay_commit: 'afterCommit',
  kill_after_pay_reserve: 'afterReserve',
  kill_after_pay_sign: 'afterSign',
};

const fault = process.env.TREASURY_TEST_PAY_FAULT;
if (fault) {
  const hook = FAULTS[fault];
  if (!hook) throw new Error(`TREASURY_TEST_PAY_FAULT must be one of ${Object.keys(FAULTS).join(', ')}`);
  installPayFaultHooks({ [hook]: () => process.kill(process.pid, 'SIGKILL') });
  process.stderr.write(
    JSON.stringify({ level: 40, msg: 'test fault injection active: the process is killed on every pay', fault }) + '\n',
  );
}
