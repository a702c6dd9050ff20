import 'server-only';
import { ApiError } from '@/lib/errors';
import type { Principal } from './accounts';

/**
 * What each role may do inside an entity (README "Team roles"). Every member reads, creates models, logs
 * trajectories, uploads datasets and submits jobs; destructive actions take an owner or admin, except that
 * anyone may cancel a job they submitted themselves. A personal entity has one member, its owner. API keys
 * belong to a user and act with that user's role in each entity, so creating a key grants nothing new.
 */
export type Action = 'delete_model' | 'delete_checkpoints' | 'cancel_any_job' | 'delete_eval_sets';

const ALLOWED: Record<Action, readonly string[]> = {
  delete_model: ['owner', 'admin'],
  delete_checkpoints: ['owner', 'admin'],
  cancel_any_job: ['owner', 'admin'],
  delete_eval_sets: ['owner', 'admin'],
};

const WHAT: Record<Action, string> = {
  delete_model: 'delete models',
  delete_checkpoints: 'delete checkpoints',
  cancel_any_job: "cancel other members' jobs",
  delete_eval_sets: 'delete eval sets',
};

export function can(principal: Principal, entityId: string, action: Action): boolean {
  const role = principal.memberships.find((m) => m.id === entityId)?.role;
  return role !== undefined && ALLOWED[action].includes(role);
}

/** Call after the resource was found in the caller's scope (outside it, it is a 404, never a 403). */
export function requirePermission(principal: Principal, entityId: string, action: Action): void {
  if (!can(principal, entityId, action)) {
    throw new ApiError('forbidden', `Only team owners and admins can ${WHAT[action]}`);
  }
}
