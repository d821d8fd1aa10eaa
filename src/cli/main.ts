#!/usr/bin/env node
/**
 * perfpoke command line. Each command is one module in ./commands that
 * exports `register(program)`; they are found at start-up so commands can be
 * added without editing this file.
 *
 * Exit codes, for scripts: 0 success, 1 "the answer is no" (e.g. check found
 * inconsistencies), 2 bad input or usage, 3 internal error.
 */
import { Command, CommanderError } from 'commander';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { reportError } from './errors.js';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * `only`: the command the user asked for. Each command module is named after
 * its command, so only that module is imported (start-up stays fast however
 * many commands there are); `--help` and unknown names load them all.
 */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command('perfpoke')
    .description(
      'Read, write, record, check and decode Linux perf.data files, with first-class PERF_RECORD_TEXT_POKE support',
    )
    .version((JSON.parse(readFileSync(join(here, '..', '..', 'package.json'), 'utf8')) as { version: string }).version)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  const dir = join(here, 'commands');
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    // no commands built yet
  }
  let files = names.filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts') && !f.includes('.test.')).sort();
  const chosen = files.filter((f) => f.replace(/\.(ts|js)$/, '') === only);
  if (chosen.length > 0) files = chosen;
  for (const f of files) {
    let mod: { register?: (p: Command) => void };
    try {
      mod = (await import(pathToFileURL(join(dir, f)).href)) as typeof mod;
    } catch (e) {
      // One broken command module must not take every other command down:
      // register a placeholder that reports the load failure when used.
      const name = f.replace(/\.(ts|js)$/, '');
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
