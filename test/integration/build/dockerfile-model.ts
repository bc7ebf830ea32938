/**
 * The Dockerfile and .dockerignore read as data, for tests that replay the image's steps without a container
 * engine: the stages with their instructions (continuation lines joined, comments dropped), the lineage of a
 * stage, and whether the build context keeps a path. Defends: a replay that drifts from the Dockerfile (the
 * tests take the sources to copy, the build command, the files the runtime stages copy and the CMD from here).
 * Does not: expand variables, or understand .dockerignore beyond the shapes the file uses (a root path, or
 * `*suffix` at the root); any other pattern throws, so a new shape is noticed instead of silently ignored.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Instruction {
  keyword: string;
  args: string;
}
export interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

export function dockerfileStages(text: string): Stage[] {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw)) continue;
    const line = raw.replace(/\s+$/, '');
    if (line.endsWith('\\')) current += line.slice(0, -1) + ' ';
    else {
      current += line;
      if (current.trim() !== '') logical.push(current.trim());
      current = '';
    }
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword, ...rest] = line.split(/\s+/);
    const ins = { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
    if (ins.keyword === 'FROM') {
      const [from, as, name] = rest;
      stages.push({ from: from!, name: as?.toUpperCase() === 'AS' ? name! : `#${stages.length}`, instructions: [] });
    } else stages.at(-1)?.instructions.push(ins);
  }
  return stages;
}

/** A stage and every stage it is built FROM, base first. */
export function lineage(stages: Stage[], name: string): Stage[] {
  const chain: Stage[] = [];
  for (let s = stages.find((x) => x.name === name); s; s = stages.find((x) => x.name === s!.from)) chain.unshift(s);
  if (chain.length === 0) throw new Error(`no stage ${name}`);
  return chain;
}

/** The exec-form JSON array of an instruction (CMD ["node", "…"]). */
export function execForm(ins: Instruction | undefined): string[] {
  if (!ins) throw new Error('no instruction');
  return JSON.parse(ins.args) as string[];
}

/** A predicate saying whether the build context leaves out a path (relative, with `/`). */
export function dockerIgnore(text: string): (rel: string) => boolean {
  const patterns = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  for (const p of patterns)
    if (p.startsWith('!') || p.includes('?') || p.includes('[') || (p.includes('*') && !/^\*[^*/]+$/.test(p)))
      throw new Error(`.dockerignore pattern not understood here: ${p}`);
  return (rel) =>
    patterns.some((p) =>
      p.startsWith('*') ? !rel.includes('/') && rel.endsWith(p.slice(1)) : rel === p || rel.startsWith(`${p}/`),
    );
}

/** Copies `from` (a file or folder) to `to`, leaving out what `ignored` names (paths relative to `root`). */
export function copyContext(root: string, rel: string, to: string, ignored: (rel: string) => boolean): void {
  const from = path.join(root, rel);
  fs.cpSync(from, to, {
    recursive: true,
    filter: (src) => !ignored(path.relative(root, src).split(path.sep).join('/')),
  });
}
