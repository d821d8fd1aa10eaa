/**
 * Every command, by name, as a lazy import of its module in ./commands.
 *
 * The table is static, not a directory listing, so that a bundler can follow
 * each import (the CLI ships as one esbuild bundle, with one chunk per
 * command: start-up loads only the command asked for). test/command-table
 * fails when a module in ./commands is missing here, or the other way round.
 */
import type { Command } from 'commander';

export interface CommandModule {
  register?: (program: Command) => void;
}

export const COMMANDS: Readonly<Record<string, () => Promise<CommandModule>>> = {
  check: () => import('./commands/check.js'),
  convert: () => import('./commands/convert.js'),
  decode: () => import('./commands/decode.js'),
  demo: () => import('./commands/demo.js'),
  dump: () => import('./commands/dump.js'),
  export: () => import('./commands/export.js'),
  header: () => import('./commands/header.js'),
  image: () => import('./commands/image.js'),
  inject: () => import('./commands/inject.js'),
  pokes: () => import('./commands/pokes.js'),
  'pt-dump': () => import('./commands/pt-dump.js'),
  record: () => import('./commands/record.js'),
  report: () => import('./commands/report.js'),
  script: () => import('./commands/script.js'),
  sim: () => import('./commands/sim.js'),
  sql: () => import('./commands/sql.js'),
  stats: () => import('./commands/stats.js'),
};
