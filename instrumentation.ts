/**
 * Next.js calls register() once when a server process starts. What it starts needs Node.js (the database, the
 * training runner, signal handlers), so it lives in lib/runtime/server-start.ts, imported only under the Node.js
 * runtime: written this way, the import is left out of the Edge build, which otherwise warned about every Node API
 * the start-up code uses (14 warnings on every `next build`).
 */
export async function register() {
  // `next build` loads the server too, and must not touch a database.
  if (process.env.NEXT_RUNTIME === 'nodejs' && process.env.NEXT_PHASE !== 'phase-production-build') {
    const { startServer } = await import('./lib/runtime/server-start');
    await startServer();
  }
}
