import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { repoRoot } from './cli.js';
import { sourceModules as sources } from './src-modules.js';

// docs/design.md: a layer imports only layers above it in this order (sim, the
// trace simulator, may use every library layer; only the CLI sits below it).
const ORDER = [
  'abi',
  'io',
  'perfdata',
  'session',
  'machine',
  'x86',
  'intelpt',
  'record',
  'sim',
  'format',
  'export',
  'report',
  'cli',
];

test('every src module imports only its own layer or layers above it (docs/design.md)', () => {
  const src = join(repoRoot, 'src');
  const bad: string[] = [];
  let checked = 0;
  for (const file of sources(src)) {
    const me = relative(src, file).split('/')[0]!;
    if (!ORDER.includes(me)) continue;
    for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const target = relative(src, normalize(join(dirname(file), m[1]!))).split('/')[0]!;
      if (!ORDER.includes(target) || target === me) continue;
      checked++;
      if (ORDER.indexOf(target) > ORDER.indexOf(me))
        bad.push(`${relative(repoRoot, file)} imports ${m[1]} (${target} is below ${me})`);
    }
  }
  assert.ok(checked > 50, 'the check saw cross-layer imports');
  assert.deepEqual(bad, []);
});

test('the Intel PT packet decoder knows nothing of the code image (libipt layering)', () => {
  const dir = join(repoRoot, 'src', 'intelpt', 'packets');
  for (const file of sources(dir)) {
    assert.doesNotMatch(readFileSync(file, 'utf8'), /from '[^']*machine\//, relative(repoRoot, file));
  }
});
