#!/usr/bin/env node
/**
 * perfpoke command line. Each command is one module in ./commands that
 * exports `register(program)`, listed by name in ./command-table.
 *
 * Exit codes, for scripts: 0 success, 1 "the answer is no" (e.g. check found
 * inconsistencies), 2 bad input or usage, 3 internal error.
 */
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { COMMANDS, type CommandModule } from './command-table.js';
import { reportError } from './errors.js';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * `only`: the command the user asked for. Only that command's module is
 * imported (start-up stays fast however many commands there are); `--help`
 * and unknown names load them all.
 */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command('perfpoke')
    .description(
      'Read, write, record, check and decode Linux perf.data files, with first-class PERF_RECORD_TEXT_POKE support',
    )
    .version((JSON.parse(readFileSync(join(here, '..', '..', 'package.json'), 'utf8')) as { version: string }).version)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  // --version needs no command; --help and unknown names list them all
  const versionOnly = only === '--version' || only === '-V';
  const asked = only !== undefined && Object.hasOwn(COMMANDS, only) ? [only] : Object.keys(COMMANDS);
  const chosen = versionOnly ? [] : asked;
  for (const name of chosen) {
    let mod: CommandModule;
    try {
      mod = await COMMANDS[name]!();
    } catch (e) {
      // One broken command module must not take every other command down:
      // register a placeholder that reports the load failure when used.
      program
        .command(name)
        .description(`(unavailable: failed to load)`)
        .allowUnknownOption()
        .argument('[args...]')
        .action(() => {
          throw new Error(`command ${name} failed to load: ${(e as Error)?.stack ?? String(e)}`);
        });
      continue;
    }
    if (typeof mod.register === 'function') mod.register(program);
  }
  return program;
}

async function main(): Promise<void> {
  const program = await buildProgram(process.argv[2]);
  try {
    await program.parseAsync(process.argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0; usage errors exit 2
      process.exitCode = e.exitCode === 0 ? 0 : 2;
      return;
    }
    process.exitCode = reportError(e);
  }
}

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
});

await main();
