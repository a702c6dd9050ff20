import { defineConfig } from 'drizzle-kit';

// Generation only (`npm run db:generate`); migrations are applied by lib/db/migrate.ts at start-up.
export default defineConfig({
  dialect: 'postgresql',
  schema: './lib/db/schema.ts',
  out: './lib/db/migrations',
});
