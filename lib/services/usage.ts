import 'server-only';
import { getDb } from '@/lib/db/client';
import * as usageRepo from '@/lib/db/repositories/usage';
import { entityByName, type Principal } from './accounts';

/**
 * Which entity and project a chat request is billed to (docs/contract.md §1.3): the `Compat-Project` / `OpenAI-Project`
 * header when it looks like `<team>/<project>` and names an entity the caller belongs to; otherwise the key
 * owner's personal entity and project `inference`. A malformed or foreign header is ignored, never an error.
 */
export function usageTarget(principal: Principal, headers: Headers): { entityId: string; project: string } {
  const header = headers.get('compat-project') ?? headers.get('openai-project');
  const match = header ? /^([^/]+)\/([^/]+)$/.exec(header.trim()) : null;
  const entity = match ? entityByName(principal, match[1]) : undefined;
  if (match && entity) return { entityId: entity.id, project: match[2] };
  return { entityId: principal.personalEntity.id, project: 'inference' };
}

export async function recordUsage(input: {
  entityId: string;
  project: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
}): Promise<void> {
  await usageRepo.addUsage(await getDb(), { ...input, day: new Date().toISOString().slice(0, 10) });
}

export async function listUsage(principal: Principal, q: { entity?: string; days: number }) {
  const scope = q.entity === undefined ? principal.memberships : principal.memberships.filter((m) => m.name === q.entity);
  const names = new Map(scope.map((m) => [m.id, m.name]));
  const since = new Date(Date.now() - (q.days - 1) * 86_400_000).toISOString().slice(0, 10);
  const rows = await usageRepo.listUsage(await getDb(), [...names.keys()], since);
  return {
    object: 'list' as const,
    data: rows.map((r) => ({
      entity: names.get(r.entityId)!,
      project: r.project,
      model: r.model,
      day: r.day,
      requests: r.requests,
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
    })),
  };
}
