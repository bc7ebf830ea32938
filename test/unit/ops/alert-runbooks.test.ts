/**
 * The alerting rules link runbooks an operator can open: every alert in ops/prometheus/treasury-alerts.yml
 * carries a `runbook_url` annotation naming a page under docs/runbooks/ that exists and names the alert back
 * (so a renamed alert or a moved page fails here). The audit chain's runbook follows from
 * `npm run audit:verify`, not from an alert.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('alert runbooks', () => {
  const rules = fs.readFileSync(path.join(ROOT, 'ops/prometheus/treasury-alerts.yml'), 'utf8');
  /** Each rule's text, from its `- alert:` line to the next. */
  const alerts = rules
    .split(/^(?=\s+- alert: )/m)
    .slice(1)
    .map((block) => ({ name: /- alert: (\S+)/.exec(block)![1]!, block }));

  it('every alert has a runbook_url under docs/runbooks/ that exists', () => {
    assert.ok(alerts.length >= 10, `alerts found: ${alerts.length}`);
    for (const { name, block } of alerts) {
      const url = /^\s+runbook_url: "([^"]+)"$/m.exec(block)?.[1];
      assert.ok(url, `${name} has a runbook_url`);
      assert.match(url, /^docs\/runbooks\/[a-z0-9-]+\.md$/, `${name}: ${url}`);
      assert.ok(fs.existsSync(path.join(ROOT, url)), `${name}: ${url} exists`);
    }
  });

  it('every runbook an alert links names that alert', () => {
    for (const { name, block } of alerts) {
      const url = /^\s+runbook_url: "([^"]+)"$/m.exec(block)![1]!;
      const page = fs.readFileSync(path.join(ROOT, url), 'utf8');
      assert.ok(page.includes(name), `${url} names ${name}`);
    }
  });
});
