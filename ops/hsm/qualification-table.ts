/**
 * The qualification's report as a Markdown table (docs/deploy-hsm.md shows it for SoftHSM and opencryptoki): one
 * row per required mechanism (listed with the functions the signer needs?), one per functional probe, one per
 * KeyBackend contract test, then a verdict per capability. Pure: it formats what ./qualify.ts measured.
 */
import type { TokenQualification } from '../../signer/backends/pkcs11/token-qualification.js';
import type { TokenCapability } from '../../signer/backends/pkcs11/token-requirements.js';

export interface ContractResult {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  error?: string;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 160);
const mark = (ok: boolean) => (ok ? 'pass' : '**FAIL**');

export function qualificationTable(
  token: { module: string; label: string; manufacturer: string; model: string },
  q: TokenQualification,
  contract: ContractResult[] | 'skipped',
): string {
  const lines = [
    `Token "${cell(token.label)}" (${cell(token.manufacturer)} ${cell(token.model)}) in ${cell(token.module)}`,
    '',
    '| capability | check | result | detail |',
    '|---|---|---|---|',
  ];
  for (const f of q.mechanisms) {
    const detail =
      f.status === 'ok'
        ? f.requirement.flagNames.join(', ')
        : f.status === 'absent'
          ? 'not listed'
          : `no ${f.missingFlags.join(', no ')}`;
    lines.push(
      `| ${f.requirement.capability} | mechanism ${f.requirement.name} | ${mark(f.status === 'ok')} | ${detail} |`,
    );
  }
  for (const p of q.probes)
    lines.push(`| ${p.capability} | ${cell(p.step)} | ${mark(p.ok)} | ${cell(p.detail ?? '')} |`);
  if (contract === 'skipped')
    lines.push('| contract | KeyBackend contract | skipped | the token cannot hold the keys |');
  else
    for (const c of contract)
      lines.push(
        `| contract | ${cell(c.title)} | ${c.state === 'pending' ? 'skipped' : mark(c.state === 'passed')} | ${cell(c.error ?? '')} |`,
      );
  lines.push('');
  for (const [capability, usable] of Object.entries(q.usable) as Array<[TokenCapability, boolean]>)
    lines.push(`- ${capability}: ${usable ? 'qualifies' : 'does NOT qualify'}`);
  if (contract !== 'skipped') {
    const failed = contract.filter((c) => c.state === 'failed').length;
    lines.push(
      `- KeyBackend contract: ${contract.length - failed} of ${contract.length} passed or skipped, ${failed} failed`,
    );
  }
  return lines.join('\n');
}
