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
  const { startBuiltinRunner, stopBuiltinRunner } = await import('./lib/jobs/builtin-runner');
  await startBuiltinRunner({ port: Number(process.env.PORT ?? 3000), embeddedDatabase: handle.kind === 'pglite' });
  process.once('exit', stopBuiltinRunner);
  // Files a crash or a failing store left behind (rows are always deleted first); in the background.
  const { sweepOrphanArtifacts } = await import('./lib/services/artifact-sweep');
  sweepOrphanArtifacts()
    .then((swept) => {
      if (swept.models + swept.datasets + swept.tempFiles > 0) console.log('[tuneboard] orphan artifacts removed', swept);
    })
    .catch((err) => console.error('[tuneboard] orphan sweep failed:', (err as Error).message));
}
