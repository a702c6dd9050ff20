import { z } from 'zod';
import { idSchema, timestampSchema } from './common';

/** Entity (user or team) handles: they appear in model names and URLs. */
export const handleSchema = z
  .string()
  .min(2)
  .max(40)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, 'use lower-case letters, digits, ".", "_" or "-", starting with a letter or digit');

export const emailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+$/, 'must be an email address');

export const passwordSchema = z
  .string()
  .min(8, 'must be at least 8 characters')
  .max(256)
  // Spaces alone (or padding a short word) are not a password anyone meant to choose.
  .refine((p) => p.trim().length >= 8, 'must have at least 8 characters besides leading and trailing spaces');

export const signUpBodySchema = z.object({
  email: emailSchema,
  password: passwordSchema,
  name: z.string().trim().max(100).optional(),
  username: handleSchema.optional().describe('Handle of the personal entity; derived from the email when absent'),
});
export type SignUpBody = z.infer<typeof signUpBodySchema>;

export const signInBodySchema = z.object({ email: emailSchema, password: z.string().min(1).max(256) });

export const entityRefSchema = z.object({
  id: idSchema,
  name: z.string(),
  kind: z.enum(['user', 'team']),
  role: z.enum(['owner', 'admin', 'member']),
});

export const sessionSchema = z.object({
  user: z.object({ id: idSchema, email: z.string(), name: z.string() }),
  default_entity: z.string(),
  entities: z.array(entityRefSchema),
});
export type SessionDto = z.infer<typeof sessionSchema>;

export const apiKeySchema = z.object({
  id: idSchema,
  name: z.string(),
  prefix: z.string().describe('First characters of the key, to tell keys apart'),
  created_at: timestampSchema,
  last_used_at: timestampSchema.nullable(),
  expires_at: timestampSchema.nullable(),
  revoked_at: timestampSchema.nullable(),
});
export type ApiKeyDto = z.infer<typeof apiKeySchema>;

export const createdApiKeySchema = apiKeySchema.extend({
  key: z.string().describe('The secret. Shown once: only its hash is stored.'),
});

export const createApiKeyBodySchema = z.object({
  name: z.string().trim().min(1).max(100),
  expires_in_days: z.int().min(1).max(3650).nullish(),
});

export const tokenBodySchema = z.object({
  email: emailSchema,
  password: z.string().min(1).max(256),
  key_name: z.string().trim().min(1).max(100).optional().default('script'),
  expires_in_days: z.int().min(1).max(3650).nullish(),
});

export const teamMemberSchema = z.object({
  user_id: idSchema,
  email: z.string(),
  name: z.string(),
  role: z.enum(['owner', 'admin', 'member']),
});

export const teamSchema = z.object({
  id: idSchema,
  name: z.string(),
  role: z.enum(['owner', 'admin', 'member']).describe("The caller's role"),
  created_at: timestampSchema,
  members: z.array(teamMemberSchema),
});
export type TeamDto = z.infer<typeof teamSchema>;

export const createTeamBodySchema = z.object({ name: handleSchema });
export const addMemberBodySchema = z.object({
  email: emailSchema,
  role: z.enum(['admin', 'member']).optional().default('member'),
});

export const apiKeyListSchema = z.object({ object: z.literal('list'), data: z.array(apiKeySchema) });
export type ApiKeyList = z.infer<typeof apiKeyListSchema>;

export const teamListSchema = z.object({ object: z.literal('list'), data: z.array(teamSchema) });
export type TeamList = z.infer<typeof teamListSchema>;

export const signOutResultSchema = z.object({ signed_out: z.literal(true) });
export const memberRemovedSchema = z.object({ removed: z.literal(true) });
