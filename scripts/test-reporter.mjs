// node's spec reporter, except that a failing `todo` test is shown as the todo it
// is (its line keeps "# TODO …") instead of being listed again in the red
// "failing tests" block at the end of a run that passed. Summary counts
// (ℹ tests / pass / fail / todo) are node's own and unchanged.
import { Readable } from 'node:stream';
import { spec as Spec } from 'node:test/reporters';

async function* todoFailuresAsTodo(source) {
  for await (const event of source) {
    const todo = event.data?.todo;
    if (event.type === 'test:fail' && todo !== undefined && todo !== false) {
      const why = String(event.data.details?.error?.cause?.message ?? event.data.details?.error?.message ?? '');
      const label = `${todo === true ? 'TODO' : todo} — fails today: ${why.split('\n')[0]}`;
      const details = { ...event.data.details, error: undefined };
      yield { ...event, type: 'test:pass', data: { ...event.data, todo: label, details } };
    } else yield event;
  }
}

export default async function* reporter(source) {
  yield* Readable.from(todoFailuresAsTodo(source)).pipe(new Spec());
}
