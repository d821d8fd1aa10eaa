/**
 * perfpoke's one progress reporter: a cli-progress bar on stderr when stderr
 * is a terminal, the input is big enough for a bar to help (16 MiB) and
 * `--quiet` was not given; silent otherwise. cli-progress is loaded only when
 * a bar is drawn (start-up stays fast).
 */
import { createRequire } from 'node:module';
import type { SingleBar } from 'cli-progress';

const MIN_TOTAL = 16 << 20;

export interface Progress {
  /** `done` of `total` units; `total` may be given here when it is only known late. */
  update(done: number, total?: number): void;
  stop(): void;
}

const SILENT: Progress = { update: () => {}, stop: () => {} };

export function startProgress(label: string, total: number, opts: { quiet?: boolean } = {}): Progress {
  if (opts.quiet || !process.stderr.isTTY) return SILENT;
  let bar: SingleBar | undefined;
  let shown = 0;
  let step = 0;
  return {
    update(done, t) {
      if (t !== undefined) total = t;
      if (total < MIN_TOTAL || done - shown < step) return;
      if (!bar) {
        const cliProgress = createRequire(import.meta.url)('cli-progress') as typeof import('cli-progress');
        bar = new cliProgress.SingleBar(
          { stream: process.stderr, format: `${label} [{bar}] {percentage}%`, clearOnComplete: true },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, 0);
        step = Math.floor(total / 1000);
      }
      shown = done;
      bar.update(Math.min(done, total));
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}
