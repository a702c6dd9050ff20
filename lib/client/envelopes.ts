import { z } from 'zod';
import { apiKeySchema, teamSchema } from '@/lib/schemas/accounts';

/*
 * Response shapes that the account routes declare inline (app/v1/api-keys, app/v1/teams, sign-out, member
 * removal). They are built from the contract's item schemas so a change there reaches the dashboard.
 * They belong in lib/schemas/accounts.ts, next to the routes' own declarations; until then, this file
 * is the only place that repeats them.
 */
export const apiKeyListSchema = z.object({ object: z.literal('list'), data: z.array(apiKeySchema) });
export type ApiKeyList = z.infer<typeof apiKeyListSchema>;

export const teamListSchema = z.object({ object: z.literal('list'), data: z.array(teamSchema) });
export type TeamList = z.infer<typeof teamListSchema>;

export const signOutResultSchema = z.object({ signed_out: z.literal(true) });
export const memberRemovedSchema = z.object({ removed: z.literal(true) });
