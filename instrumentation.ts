/**
 * Runs once when a server process starts: applies pending migrations before the first request, so a
 * fresh clone needs no separate migrate step. `next build` never gets here with a database to touch.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs' || process.env.NEXT_PHASE === 'phase-production-build') return;
  const { getDbHandle } = await import('./lib/db/client');
  const handle = await getDbHandle();
  console.log(`[tuneboard] database ready (${handle.kind})`);
}
