/**
 * The type-aware rules of eslint.typed.config.js do their job: a probe (virtually placed: nothing is written to
 * disk) that leaves a promise floating is reported, in each folder the configuration covers; the same call
 * awaited, returned, handed to `.catch` or marked `void` passes. Slow to start (the type checker loads the
 * probe's project), hence its own file.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { ESLint } from 'eslint';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const RULE = '@typescript-eslint/no-floating-promises';
const PROBES = ['policy/probe.ts', 'signer/probe.ts', 'base/probe.ts', 'src/gate/probe.ts', 'ops/probe.ts'];
const TASK = 'async function task(): Promise<number> {\n  return 1;\n}\n';

describe('typed lint (eslint.typed.config.js)', function () {
  this.timeout(600_000);
  let eslint: ESLint;
  before(() => {
    // The project service types only files on disk; a probe that never touches the disk joins its default
    // project instead (the probes import nothing). Rules and file targets are the configuration's own.
    eslint = new ESLint({
      cwd: ROOT,
      overrideConfigFile: path.join(ROOT, 'eslint.typed.config.js'),
      overrideConfig: {
        languageOptions: { parserOptions: { projectService: { allowDefaultProject: PROBES }, tsconfigRootDir: ROOT } },
      },
    });
  });
  const rulesOf = async (at: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, at) });
    assert.ok(result, `no lint result for ${at}`);
    assert.ok(!result.messages.some((m) => m.fatal), `${at}: ${JSON.stringify(result.messages)}`);
    return result.messages.map((m) => m.ruleId);
  };

  it('reports a floating promise, and passes one that is awaited, returned, caught or voided', async () => {
    const floating = [
      `${TASK}export function probe(): void {\n  task();\n}\n`,
      `${TASK}export function probe(): void {\n  task().then((n) => n + 1);\n}\n`,
      `${TASK}export const probe = (tasks: number[]) => {\n  tasks.map(async () => task());\n  Promise.all([task()]);\n};\n`,
    ];
    const handled = [
      `${TASK}export async function probe(): Promise<void> {\n  await task();\n}\n`,
      `${TASK}export function probe(): Promise<number> {\n  return task();\n}\n`,
      `${TASK}export function probe(): void {\n  task().catch(() => undefined);\n}\n`,
      `${TASK}export function probe(): void {\n  void task();\n}\n`,
    ];
    for (const at of PROBES.slice(0, 3)) {
      for (const code of floating) assert.ok((await rulesOf(at, code)).includes(RULE), `${at}:\n${code}`);
      for (const code of handled) assert.deepEqual(await rulesOf(at, code), [], `${at}:\n${code}`);
    }
  });

  it('covers src/ and ops/ too', async () => {
    const code = `${TASK}export function probe(): void {\n  task();\n}\n`;
    for (const at of PROBES.slice(3)) assert.ok((await rulesOf(at, code)).includes(RULE), `${at}:\n${code}`);
  });
});
