/**
 * The Dockerfile runs the signer and the API as two users (no container engine here: the file is read and
 * its users, directories and stages checked against a small model of Unix permissions). Only the signer's
 * user may read its PIN and token directory; the API's user reaches the signer through the socket's group
 * only; neither user may change the code in /app; the default target is the API, `--target signer` the signer.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Stage {
  name: string;
  base: string;
  instructions: Array<{ op: string; args: string }>;
}

/** Stages of a Dockerfile, with continuation lines joined and comments dropped. */
function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const space = line.indexOf(' ');
    const op = line.slice(0, space).toUpperCase();
    const args = line.slice(space + 1).trim();
    if (op === 'FROM') {
      const [base, as, name] = args.split(/\s+/);
      stages.push({ name: as?.toUpperCase() === 'AS' ? name! : String(stages.length), base: base!, instructions: [] });
    } else stages.at(-1)?.instructions.push({ op, args }); // global ARGs before the first FROM belong to no stage
  }
  return stages;
}

/** Every instruction a stage runs, its bases' first (a stage built FROM another stage inherits them). */
function lineage(stages: Stage[], name: string): Stage['instructions'] {
  const stage = stages.find((s) => s.name === name);
  assert.ok(stage, `stage ${name}`);
  const parent = stages.find((s) => s.name === stage.base);
  return [...(parent ? lineage(stages, parent.name) : []), ...stage.instructions];
}

/** Environment a stage ends with: `ENV a=b c=d` pairs, later ones winning. */
function envOf(instructions: Stage['instructions']): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of instructions.filter((i) => i.op === 'ENV'))
    for (const pair of args.split(/\s+/)) env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
  return env;
}

interface User {
  name: string;
  uid: number;
  groups: string[];
}
interface Dir {
  path: string;
  owner: string;
  group: string;
  mode: number;
}

/** Users (useradd), groups (groupadd) and directories (`install -d -o … -g … -m …`) the RUN lines create. */
function accountsAndDirs(instructions: Stage['instructions']) {
  const commands = instructions
    .filter((i) => i.op === 'RUN')
    .flatMap((i) => i.args.split('&&').map((c) => c.trim().split(/\s+/)));
  const flag = (words: string[], name: string) => words[words.indexOf(name) + 1];
  const users: User[] = commands
    .filter((w) => w[0] === 'useradd')
    .map((w) => ({
      name: w.at(-1)!,
      uid: Number(flag(w, '--uid')),
      groups: [flag(w, '--gid')!, ...(w.includes('--groups') ? flag(w, '--groups')!.split(',') : [])],
    }));
  const dirs: Dir[] = commands
    .filter((w) => w[0] === 'install' && w.includes('-d'))
    .map((w) => ({ path: w.at(-1)!, owner: flag(w, '-o')!, group: flag(w, '-g')!, mode: parseInt(flag(w, '-m')!, 8) }));
  return { users, dirs, commands };
}

/** May `user` open (read, or for a directory list and traverse) something with this owner, group and mode? */
function mayRead(user: User, node: Dir): boolean {
  if (user.name === node.owner) return (node.mode & 0o400) !== 0;
  if (user.groups.includes(node.group)) return (node.mode & 0o040) !== 0;
  return (node.mode & 0o004) !== 0;
}

describe('Dockerfile: the signer as its own user', () => {
  let signer: Stage['instructions'];
  let api: Stage['instructions'];
  let users: User[];
  let dirs: Dir[];
  let commands: string[][];
  before(() => {
    const stages = parseDockerfile(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
    api = lineage(stages, stages.at(-1)!.name);
    signer = lineage(stages, 'signer');
    ({ users, dirs, commands } = accountsAndDirs(signer));
  });
  const user = (name: string) => {
    const found = users.find((u) => u.name === name);
    assert.ok(found, `user ${name} is created`);
    return found;
  };
  const lastUser = (instructions: Stage['instructions']) => instructions.filter((i) => i.op === 'USER').at(-1)?.args;

  it('builds the API by default and the signer with --target signer, each as its own non-root user', () => {
    assert.equal(lastUser(api), 'treasury');
    assert.match(api.filter((i) => i.op === 'CMD').at(-1)!.args, /"dist\/src\/api\/main\.js"/);
    assert.equal(lastUser(signer), 'treasury-signer');
    assert.match(signer.filter((i) => i.op === 'CMD').at(-1)!.args, /"dist\/signer\/main\.js"/);
    const apiUser = user('treasury');
    const signerUser = user('treasury-signer');
    assert.notEqual(apiUser.uid, signerUser.uid);
    assert.ok(apiUser.uid > 0 && signerUser.uid > 0);
    assert.ok(!apiUser.groups.includes('treasury-signer'), "the API's user is not in the signer's group");
  });

  it('only the signer user may read the PIN, the token directory and the limits state', () => {
    const env = envOf(signer);
    const home = dirs.find((d) => d.path === '/var/lib/treasury-signer');
    assert.ok(home, 'the signer state directory is created');
    assert.equal(home.owner, 'treasury-signer');
    assert.equal(home.mode & 0o077, 0, 'no group or other access');
    for (const file of [env.SOFTHSM2_CONF, env.TREASURY_SIGNER_LIMITS_STATE_FILE]) {
      assert.ok(file?.startsWith(`${home.path}/`), `${file} lies inside ${home.path}`);
    }
    // The PIN on a directory (a volume) of its own, never beside the token it opens, as closed as the token's.
    const pins = dirs.find((d) => d.path === '/var/lib/treasury-signer-pins');
    assert.ok(pins, 'the PIN directory is created');
    assert.equal(pins.owner, 'treasury-signer');
    assert.equal(pins.mode & 0o077, 0, 'no group or other access to the PINs');
    assert.ok(env.TREASURY_PKCS11_PIN_FILE?.startsWith(`${pins.path}/`), 'the PIN file lies in the PIN directory');
    assert.equal(envOf(api).TREASURY_PKCS11_PIN_FILE, undefined, 'the API is given no PIN');
    for (const dir of [home, pins]) {
      assert.equal(mayRead(user('treasury-signer'), dir), true, dir.path);
      assert.equal(mayRead(user('treasury'), dir), false, `the API's user cannot reach ${dir.path}`);
    }
  });

  it("the API reaches the signer through the socket's group only", () => {
    const env = envOf(signer);
    const socketDir = dirs.find((d) => d.path === path.dirname(env.TREASURY_SIGNER_SOCKET!));
    assert.ok(socketDir, 'the socket directory is created');
    assert.equal(envOf(api).TREASURY_SIGNER_SOCKET, env.TREASURY_SIGNER_SOCKET);
    assert.equal(socketDir.owner, 'treasury-signer');
    assert.equal(socketDir.mode & 0o2000, 0o2000, 'setgid: the socket is created in the directory group');
    assert.equal(socketDir.mode & 0o007, 0, 'no access for other users');
    assert.equal(env.TREASURY_SIGNER_SOCKET_MODE, '0660');
    const socket: Dir = {
      path: env.TREASURY_SIGNER_SOCKET!,
      owner: 'treasury-signer',
      group: socketDir.group,
      mode: 0o660,
    };
    assert.equal(
      mayRead(user('treasury'), socketDir) && mayRead(user('treasury'), socket),
      true,
      "the API's user may connect",
    );
    assert.equal(mayRead({ name: 'nobody', uid: 65534, groups: ['nogroup'] }, socket), false);
  });

  it('neither user can change the code in /app', () => {
    for (const stage of [signer, api]) {
      for (const copy of stage.filter((i) => i.op === 'COPY' || i.op === 'ADD'))
        assert.ok(!/--chown/.test(copy.args), `${copy.op} ${copy.args} gives /app to a runtime user`);
    }
    assert.ok(
      !commands.some((w) => (w[0] === 'chown' || w[0] === 'chmod') && w.some((x) => x.startsWith('/app'))),
      'no chown or chmod of /app',
    );
    assert.equal(signer.filter((i) => i.op === 'WORKDIR').at(-1)?.args, '/app');
  });
});
