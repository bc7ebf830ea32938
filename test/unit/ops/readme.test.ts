/**
 * The README fits on a screen and keeps its promises: under 250 lines, the two commands unchanged
 * (`npm ci && npm start`, `npm test`) and still the package's scripts (the sandbox and the test runner),
 * LICENSE and SECURITY.md beside it, and every relative link it makes pointing at a file in the repository.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** Pages other parts of the same change add (the MCP section of docs/cli.md, the dashboard's page). */
describe('README.md', () => {
  it('is under 250 lines', () => {
    assert.ok(readme.split('\n').length < 250, `${readme.split('\n').length} lines`);
  });

  it('gives the two commands, which still start the sandbox and run every test', () => {
    assert.match(readme, /^npm ci && npm start\s+#/m);
    assert.match(readme, /^npm test\s+#/m);
    const scripts = (
      JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    assert.equal(scripts.start, 'node --import tsx ops/sandbox/start.ts');
    assert.equal(scripts.test, 'bash ops/test/run-tests.sh');
  });

  it('tours xx init, fund and buy, and a seller', () => {
    for (const command of ['xx init', 'xx fund --testnet', 'xx buy ', 'xx service init', 'xx endpoints add'])
      assert.ok(readme.includes(command), command);
    assert.match(readme, /^## Agents \(MCP\)$/m);
    assert.match(readme, /^## Dashboard$/m);
  });

  it('links only to files that exist, LICENSE and SECURITY.md among them', () => {
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!);
    const local = links.filter((l) => !/^[a-z]+:/.test(l));
    assert.ok(local.includes('LICENSE') && local.includes('SECURITY.md'));
    for (const link of local) assert.ok(fs.existsSync(path.join(ROOT, link)), `${link} exists`);
    assert.match(fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0, January 2004/);
  });
});
