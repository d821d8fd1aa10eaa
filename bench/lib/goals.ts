/**
 * The goals `npm run bench` checks (issue 16): each topic records what it
 * measured against its target, and bench/run.ts prints them together at the
 * end, so one run shows every ratio beside the figure it must reach.
 */
export interface Goal {
  what: string;
  /** The measured figure as printed (e.g. "1.62x perf (median of 7 pairs)"). */
  measured: string;
  target: string;
  met: boolean;
}

export const goals: Goal[] = [];

export function recordGoal(g: Goal): void {
  goals.push(g);
  console.log(`goal: ${g.what}: ${g.measured} (target ${g.target}) ${g.met ? 'met' : 'NOT met'}`);
}

/** The table run.ts prints last. */
export function goalsTable(): string {
  if (goals.length === 0) return '';
  const rows = goals.map((g) => [g.what, g.measured, g.target, g.met ? 'met' : 'NOT met']);
  const head = ['goal', 'measured (this run)', 'target', ''];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string =>
    r
      .map((c, i) => c.padEnd(w[i]!))
      .join('  ')
      .trimEnd();
  return [line(head), line(w.map((n) => '-'.repeat(n))), ...rows.map(line)].join('\n');
}
