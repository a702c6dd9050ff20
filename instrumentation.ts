/**
 * Runs once when a server process starts: applies pending migrations before the first request (so a fresh
 * clone needs no separate migrate step), then starts the built-in training runner and job recovery.
 * `next build` never gets here with a database to touch.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs' || process.env.NEXT_PHASE === 'phase-production-build') return;
  const { getDbHandle } = await import('./lib/db/client');
  const handle = await getDbHandle();
  console.log(`[tuneboard] database ready (${handle.kind})`);
  const { startBuiltinRunner, stopBuiltinRunner } = await import('./lib/jobs/server/builtin-runner');
  await startBuiltinRunner({ port: Number(process.env.PORT ?? 3000), embeddedDatabase: handle.kind === 'pglite' });
  process.once('exit', stopBuiltinRunner);
}
