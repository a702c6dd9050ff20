import { queryOptions } from '@tanstack/react-query';
import { apiKeyListSchema, sessionSchema, teamListSchema } from '@/lib/schemas/accounts';
import { apiFetch } from '../api/api-fetch';

/** The signed-in session, the user's API keys and teams (the settings pages and the shell). */
export const accountKeys = {
  session: () => ['session'] as const,
  apiKeys: {
    all: () => ['api-keys'] as const,
    list: () => [...accountKeys.apiKeys.all(), 'list'] as const,
  },
  teams: {
    all: () => ['teams'] as const,
    list: () => [...accountKeys.teams.all(), 'list'] as const,
  },
};

export const sessionQuery = () =>
  queryOptions({
    queryKey: accountKeys.session(),
    queryFn: ({ signal }) => apiFetch('/v1/auth/session', sessionSchema, { signal }),
  });

export const apiKeysQuery = () =>
  queryOptions({
    queryKey: accountKeys.apiKeys.list(),
    queryFn: ({ signal }) => apiFetch('/v1/api-keys', apiKeyListSchema, { signal }),
  });

export const teamsQuery = () =>
  queryOptions({
    queryKey: accountKeys.teams.list(),
    queryFn: ({ signal }) => apiFetch('/v1/teams', teamListSchema, { signal }),
  });
