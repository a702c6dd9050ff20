/** `npm run db:migrate`: applies pending migrations to DATABASE_URL, or to the PGlite data dir. */
import { closeDb, getDbHandle } from '@/lib/db/client';

async function main() {
  const handle = await getDbHandle();
  console.log(
    `migrations applied (${handle.kind}${handle.kind === 'pglite' ? `: ${process.env.TUNEBOARD_DATA_DIR ?? '.data/pglite'}` : ''})`,
  );
  await closeDb();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
