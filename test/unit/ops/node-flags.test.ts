/**
 * The API's and the signer's start-up flags (ops/node-flags.ts) are the ones every launcher uses: the npm
 * start scripts here (the Dockerfile's CMDs: ./container-files.test.ts; the sandbox and the benches import the
 * list). A flag added in one place and not the others would make a bench measure a process production does
 * not run.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { API_NODE_FLAGS, SIGNER_NODE_FLAGS, nodeFlagsFor } from '../../../ops/node-flags.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const scripts = (
  JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

describe('the services’ start-up flags (ops/node-flags.ts)', () => {
  it('npm run start:api and start:signer start node with them', () => {
    assert.equal(scripts['start:api'], ['node', ...API_NODE_FLAGS, 'dist/src/api/main.js'].join(' '));
    assert.equal(scripts['start:signer'], ['node', ...SIGNER_NODE_FLAGS, 'dist/signer/main.js'].join(' '));
  });

  it('names them by entry point, and none for another entry', () => {
    assert.deepEqual(nodeFlagsFor('src/api/main.ts'), API_NODE_FLAGS);
    assert.deepEqual(nodeFlagsFor('signer/main.ts'), SIGNER_NODE_FLAGS);
    assert.deepEqual(nodeFlagsFor('src/gate/main.ts'), []);
  });

  it('are options this node starts with (a typo would stop the service at start)', () => {
    for (const flags of [API_NODE_FLAGS, SIGNER_NODE_FLAGS]) {
      const run = spawnSync(process.execPath, [...flags, '-e', '0'], { encoding: 'utf8' });
      assert.equal(run.status, 0, `${flags.join(' ')}: ${run.stderr}`);
    }
  });
});
