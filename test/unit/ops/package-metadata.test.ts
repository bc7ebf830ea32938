/**
 * ops/build/package-metadata.ts: the published packages' `repository` and `homepage` come from one place —
 * the root package.json's fields, else TREASURY_PACKAGE_REPOSITORY_URL / TREASURY_PACKAGE_HOMEPAGE — and are
 * refused when missing, not https, on a loopback, private or `localhost` host, or carrying credentials.
 */
import assert from 'node:assert/strict';
import { packageMetadata } from '../../../ops/build/package-metadata.js';

const ENV = {
  TREASURY_PACKAGE_REPOSITORY_URL: 'git+https://git.example.org/treasury/treasury.git',
  TREASURY_PACKAGE_HOMEPAGE: 'https://treasury.example.org/',
};

describe('package metadata: one place for repository and homepage', () => {
  it('takes the variables when the root manifest has neither, naming the package folder', () => {
    assert.deepEqual(packageMetadata({ name: 'treasury' }, ENV, 'packages/sdk'), {
      ok: true,
      metadata: {
        repository: { type: 'git', url: ENV.TREASURY_PACKAGE_REPOSITORY_URL, directory: 'packages/sdk' },
        homepage: ENV.TREASURY_PACKAGE_HOMEPAGE,
      },
    });
  });

  it("prefers the root manifest's fields (a string or { url }) over the variables", () => {
    const root = {
      repository: { type: 'git', url: 'https://code.example.com/t.git' },
      homepage: 'https://t.example.com',
    };
    const result = packageMetadata(root, ENV, 'packages/x402-koa');
    assert.ok(result.ok);
    assert.equal(result.metadata.repository.url, 'https://code.example.com/t.git');
    assert.equal(result.metadata.homepage, 'https://t.example.com');
    const asString = packageMetadata({ repository: 'https://code.example.com/t.git' }, ENV, 'packages/cli');
    assert.ok(asString.ok);
    assert.equal(asString.metadata.repository.url, 'https://code.example.com/t.git');
    assert.equal(asString.metadata.homepage, ENV.TREASURY_PACKAGE_HOMEPAGE);
  });

  it('names each missing field and its variable', () => {
    const result = packageMetadata({}, {}, 'packages/sdk');
    assert.equal(result.ok, false);
    assert.ok(!result.ok && result.problems.length === 2);
    assert.match(
      !result.ok ? result.problems.join('\n') : '',
      /TREASURY_PACKAGE_REPOSITORY_URL[\s\S]*TREASURY_PACKAGE_HOMEPAGE/,
    );
  });

  it('refuses local, private, plain-http, credentialed or malformed addresses', () => {
    for (const bad of [
      'http://git.example.org/t.git',
      'https://localhost/t.git',
      'https://git.localhost/t.git',
      'https://127.0.0.1/t.git',
      'https://10.1.2.3/t.git',
      'https://192.168.1.1/t.git',
      'https://172.20.0.1/t.git',
      'https://[::1]/t.git',
      'https://[fd00::1]/t.git',
      'https://user:secret@git.example.org/t.git',
      'https://intranet/t.git',
      'git@github.com:x/y.git',
      'not a url',
    ]) {
      const result = packageMetadata({}, { ...ENV, TREASURY_PACKAGE_REPOSITORY_URL: bad }, 'packages/sdk');
      assert.equal(result.ok, false, bad);
      assert.match(!result.ok ? result.problems[0]! : '', /^repository \(TREASURY_PACKAGE_REPOSITORY_URL\)/, bad);
    }
    assert.equal(
      packageMetadata({}, { ...ENV, TREASURY_PACKAGE_HOMEPAGE: 'git+https://x.example.org' }, 'p').ok,
      false,
    );
  });
});
