/**
 * The alerting rules name runbooks an operator can open: every `runbook:` annotation in
 * ops/prometheus/treasury-alerts.yml is a file in the repository (the audit chain's runbook follows from
 * `npm run audit:verify`, not from an alert).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('alert runbooks', () => {
  const rules = fs.readFileSync(path.join(ROOT, 'ops/prometheus/treasury-alerts.yml'), 'utf8');
  const named = [...rules.matchAll(/^\s+runbook: "([^"]+)"$/gm)].map((m) => m[1]!);

  it('every runbook an alert names exists', () => {
    assert.ok(named.length >= 5, `runbook annotations found: ${named.length}`);
    for (const file of named) assert.ok(fs.existsSync(path.join(ROOT, file)), `${file} exists`);
  });
});
