import 'server-only';
import type { AutoEvalSetting } from '@/lib/db/schema';
import type { StoredScorer } from '@/lib/schemas/evals';

/** A model's auto-eval setting as the API shows it (without the user it runs as). Here so models.ts needs no evals.ts. */
export function autoEvalDto(setting: AutoEvalSetting | null) {
  if (!setting) return null;
  return {
    eval_set_id: setting.eval_set_id,
    scorers: setting.scorers as StoredScorer[],
    sampling: setting.sampling,
    n: setting.n,
  };
}
