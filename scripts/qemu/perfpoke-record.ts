/**
 * Guest entry for `perfpoke record`: the `record` command alone, without
 * src/cli/main.ts's discovery of every command. The guest runs the shared
 * project tree over 9p, and another command file caught half-edited there
 * must not stop a several-minute qemu run from recording.
 *
 * usage (in the guest): node --import tsx scripts/qemu/perfpoke-record.ts record -a --kcore -o OUT -- cmd…
 */
import { Command, CommanderError } from 'commander';

import { register } from '../../src/cli/commands/record.js';
import { reportError } from '../../src/cli/errors.js';

const program = new Command('perfpoke').exitOverride();
register(program);
try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode);
  process.exit(reportError(e));
}
