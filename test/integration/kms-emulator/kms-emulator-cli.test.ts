/**
 * The KMS emulator as its own process (ops/kms-emulator/main.ts, as the sandbox docs run it): a `refuse`
 * fault set over the control endpoint is answered before the listener closes, the process stays up while
 * nothing listens, and the emulator comes back on the same port when the fault's duration ends.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('KMS emulator CLI', function () {
  this.timeout(60_000);
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  it('answers an unreachable/refuse fault, stays up while refusing, and listens again after its duration', async () => {
    child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'ops/kms-emulator/main.ts'), '--port', '0'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let url: string | undefined;
    for await (const line of createInterface({ input: child.stdout! })) {
      url = (JSON.parse(line) as { kms_emulator?: string }).kms_emulator;
      if (url) break;
    }
    assert.ok(url, 'the emulator printed its URL');

    const set = await fetch(`${url}/__emulator/faults`, {
      method: 'POST',
      body: JSON.stringify({ mode: 'unreachable', as: 'refuse', durationMs: 1500 }),
    });
    assert.equal(set.status, 200);
    await new Promise((r) => setTimeout(r, 300));
    await assert.rejects(fetch(`${url}/__emulator/health`), 'nothing listens while the fault lasts');
    assert.equal(child.exitCode, null, 'the process is still up');

    await new Promise((r) => setTimeout(r, 2000));
    const health = await fetch(`${url}/__emulator/health`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { testDouble: boolean }).testDouble, true);
  });
});
