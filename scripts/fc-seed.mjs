// Loaded into every test process (scripts/run-tests.mjs): the property tests
// draw from one fixed seed, so a run of `npm test` — and CI — is reproducible
// and a red run can be replayed exactly. Exploring new inputs is the job of
// `npm run fuzz` and of PERFPOKE_FC_SEED (a number, or `random` for a fresh
// seed that fast-check prints with any counterexample).
import fc from 'fast-check';

const given = process.env.PERFPOKE_FC_SEED;
if (given !== 'random') fc.configureGlobal({ seed: given === undefined ? 0x5eed2026 : Number(given) });
