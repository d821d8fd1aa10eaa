/**
 * The CLI's command table (src/cli/command-table.ts) names every module in
 * src/cli/commands, and only those: a command missing from it would be
 * unreachable, and the bundle (scripts/bundle-cli.mjs) follows only the
 * table's imports. Also: the built launcher runs the bundle, which starts a
 * command faster than the plain tsc build.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../src/cli/command-table.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

test('command table: one entry per module in src/cli/commands, each registering its own name', async () => {
  const files = readdirSync(join(root, 'src', 'cli', 'commands'))
    .filter((f) => f.endsWith('.ts') && !f.includes('.test.'))
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();
  assert.deepEqual(Object.keys(COMMANDS).sort(), files);
  const { Command } = await import('commander');
  for (const [name, load] of Object.entries(COMMANDS)) {
    const program = new Command('perfpoke');
    const mod = await load();
    assert.equal(typeof mod.register, 'function', `${name}: register() exported`);
    mod.register!(program);
    assert.deepEqual(
      program.commands.map((c) => c.name()),
      [name],
      `${name}: registers the command it is named after`,
    );
  }
});

test('the bundled CLI (npm run build) lists every command and answers --version', (t) => {
  const bundle = join(root, 'dist', 'bundle', 'main.js');
  if (!existsSync(bundle)) {
    if (process.env.CI === 'true') assert.fail(`${bundle} is missing: npm ci runs npm run build, which bundles`);
    t.skip('dist/bundle not built (npm run build)');
    return;
  }
  const help = spawnSync(process.execPath, [join(root, 'bin', 'perfpoke.js'), '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  for (const name of Object.keys(COMMANDS)) assert.match(help.stdout, new RegExp(`^  ${name}\\b`, 'm'));
  assert.doesNotMatch(help.stdout, /unavailable/);
  const version = spawnSync(process.execPath, [join(root, 'bin', 'perfpoke.js'), '--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0, version.stderr);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
});
