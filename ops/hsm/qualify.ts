/**
 * `npm run hsm:qualify -- --module <path> (--token-label <label> | --slot <id>) --pin-file <path>`: whether a
 * PKCS#11 module's token can hold Treasury's keys (docs/deploy-hsm.md). It lists the mechanisms the signer needs
 * with their functions, tries each capability with session objects (signer/backends/pkcs11/token-qualification.ts,
 * the check the signer runs at every start), then runs the KeyBackend contract suite against the token
 * (test/qualification/pkcs11-contract.qualify.ts, in a mocha child process) and prints one pass/fail table.
 * Exit 0 when every capability qualifies and the contract passed, 1 otherwise, 2 on bad arguments.
 *
 * Defends: the PIN in output or arguments (a file, mode 0600 or stricter, never printed or passed on), a
 * qualification that leaves a key behind — the probes use session objects; the contract needs a root KEK token
 * object, made for the run under a random label and destroyed after it unless `--kek-label` names one. Does not
 * defend: the contract's own Ed25519 keys, which are token objects (docs/adr/0013): qualify a test token or
 * partition, never the production one.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pkcs11js from 'pkcs11js';
import { rootKekTemplate } from '../../signer/backends/pkcs11/key-templates.js';
import { Pkcs11Module } from '../../signer/backends/pkcs11/pkcs11-module.js';
import { qualifyToken, type TokenQualification } from '../../signer/backends/pkcs11/token-qualification.js';
import { qualificationTable, type ContractResult } from './qualification-table.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const USAGE =
  'usage: npm run hsm:qualify -- --module <libpkcs11.so> (--token-label <label> | --slot <id>) --pin-file <file> [--kek-label <label>] [--skip-contract]';

function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n${code === 2 ? USAGE + '\n' : ''}`);
  process.exit(code);
}

function readArgs() {
  const { values } = parseArgs({
    options: {
      module: { type: 'string' },
      'token-label': { type: 'string' },
      slot: { type: 'string' },
      'pin-file': { type: 'string' },
      'kek-label': { type: 'string' },
      'skip-contract': { type: 'boolean', default: false },
    },
  });
  if (!values.module || !fs.existsSync(values.module)) fail('--module must name an existing PKCS#11 library');
  if (!values['pin-file']) fail('--pin-file is required (the PIN is never taken on the command line)');
  if (!values['token-label'] === !values.slot) fail('name the token with --token-label or --slot, one of them');
  if (values.slot !== undefined && !/^[0-9]{1,20}$/.test(values.slot)) fail('--slot is a slot id (a number)');
  const mode = fs.statSync(values['pin-file']).mode & 0o077;
  if (mode !== 0) fail('--pin-file is readable or writable by other users: make it 0600 or 0400');
  const pin = fs.readFileSync(values['pin-file'], 'utf8').trim();
  if (pin.length < 4) fail('--pin-file holds no PIN');
  return { ...values, module: values.module, pinFile: values['pin-file'], pin };
}

/** The token's slot and its description; a `--slot` names it by id, a `--token-label` by exact label. */
function findToken(module: Pkcs11Module, args: ReturnType<typeof readArgs>) {
  const slot = args.slot
    ? module.p11
        .C_GetSlotList(true)
        .find((s) => BigInt(`0x${Buffer.from(s).reverse().toString('hex')}`) === BigInt(args.slot!))
    : module.findTokenSlot(args['token-label']!);
  if (!slot) fail(`no slot with a token has id ${args.slot}`, 1);
  const info = module.p11.C_GetTokenInfo(slot);
  return { slot, label: info.label.trim(), manufacturer: info.manufacturerID.trim(), model: info.model.trim() };
}

/** Runs the contract suite in a mocha child process and reads its JSON report. */
function runContract(env: Record<string, string>): ContractResult[] {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-qualify-')), 'contract.json');
  const run = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/mocha/bin/mocha.js'),
      '--config',
      path.join(ROOT, '.mocharc.json'),
      '--reporter',
      'json',
      '--reporter-option',
      `output=${out}`,
      path.join(ROOT, 'test/qualification/pkcs11-contract.qualify.ts'),
    ],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'], timeout: 30 * 60_000 },
  );
  if (!fs.existsSync(out))
    return [{ title: 'the contract suite ran', state: 'failed', error: `mocha exited ${run.status}` }];
  const report = JSON.parse(fs.readFileSync(out, 'utf8')) as {
    passes: Array<{ fullTitle: string }>;
    failures: Array<{ fullTitle: string; err?: { message?: string } }>;
    pending: Array<{ fullTitle: string }>;
  };
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  const short = (title: string) => title.replace(/^KeyBackend contract: PKCS#11 \([^)]*\) /, '');
  return [
    ...report.passes.map((t) => ({ title: short(t.fullTitle), state: 'passed' as const })),
    ...report.failures.map((t) => ({
      title: short(t.fullTitle),
      state: 'failed' as const,
      error: t.err?.message?.split('\n')[0] ?? '',
    })),
    ...report.pending.map((t) => ({ title: short(t.fullTitle), state: 'pending' as const })),
  ];
}

/** Makes (or, with `destroy`, removes) the run's root KEK token object. */
function withSession<T>(args: ReturnType<typeof readArgs>, fn: (m: Pkcs11Module, s: pkcs11js.Handle) => T): T {
  const module = Pkcs11Module.load(args.module);
  try {
    const { slot } = findToken(module, args);
    const session = module.openSession(slot);
    module.login(session, args.pin);
    return fn(module, session);
  } finally {
    module.finalize();
  }
}

function main(): void {
  const args = readArgs();
  let token: ReturnType<typeof findToken> | undefined;
  const q: TokenQualification = withSession(args, (module, session) => {
    token = findToken(module, args);
    return qualifyToken(module.p11, token.slot, session);
  });
  const canHoldKeys = q.usable.key_hierarchy && q.usable.secp256k1;
  let contract: ContractResult[] | 'skipped' = 'skipped';
  if (canHoldKeys && !args['skip-contract']) {
    const kekLabel = args['kek-label'] ?? `treasury-qualify-${randomBytes(6).toString('hex')}`;
    const kek = args['kek-label']
      ? undefined
      : withSession(args, (m, s) =>
          m.p11.C_GenerateKey(s, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, rootKekTemplate(kekLabel)),
        );
    try {
      contract = runContract({
        TREASURY_QUALIFY_MODULE: args.module,
        TREASURY_QUALIFY_TOKEN_LABEL: token!.label,
        TREASURY_QUALIFY_PIN_FILE: path.resolve(args.pinFile),
        TREASURY_QUALIFY_KEK_LABEL: kekLabel,
      });
    } finally {
      if (kek !== undefined) withSession(args, (m, s) => destroyByLabel(m, s, kekLabel));
    }
  }
  process.stdout.write(
    qualificationTable(
      { module: args.module, label: token!.label, manufacturer: token!.manufacturer, model: token!.model },
      q,
      contract,
    ) + '\n',
  );
  const qualifies =
    Object.values(q.usable).every(Boolean) && contract !== 'skipped' && contract.every((c) => c.state !== 'failed');
  process.exit(qualifies || (args['skip-contract'] && Object.values(q.usable).every(Boolean)) ? 0 : 1);
}

/** Destroys the token's secret key labelled `label` (the run's KEK). */
function destroyByLabel(module: Pkcs11Module, session: pkcs11js.Handle, label: string): void {
  module.p11.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
    { type: pkcs11js.CKA_LABEL, value: label },
  ]);
  let found: pkcs11js.Handle | null;
  try {
    found = module.p11.C_FindObjects(session);
  } finally {
    module.p11.C_FindObjectsFinal(session);
  }
  if (found) module.p11.C_DestroyObject(session, found);
}

main();
