/**
 * Saved prompt sets of the playground: a name and a list of prompts, kept in this browser's localStorage (they are
 * a person's test questions, not data the server needs). Everything read back is checked: the storage is the
 * user's to edit, and a bad entry is skipped, never a crash.
 */

export interface PromptSet {
  name: string;
  prompts: string[];
}

export const PROMPT_SETS_KEY = 'tuneboard.playground.prompt-sets';
/** A set runs every prompt on every pane: more than this is a batch job, not a playground run. */
export const MAX_SET_PROMPTS = 50;
const MAX_SETS = 50;

/** The prompts of a textarea, one per line; blank lines are not prompts. */
export function parsePrompts(text: string): { prompts: string[] } | { error: string } {
  const prompts = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (prompts.length === 0) return { error: 'Write at least one prompt, one per line' };
  if (prompts.length > MAX_SET_PROMPTS) {
    return { error: `At most ${MAX_SET_PROMPTS} prompts in a set (this one has ${prompts.length})` };
  }
  return { prompts };
}

export function readPromptSets(raw: string | null): PromptSet[] {
  if (!raw) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  return value
    .filter(
      (s): s is PromptSet =>
        typeof s === 'object' &&
        s !== null &&
        typeof s.name === 'string' &&
        s.name.trim() !== '' &&
        Array.isArray(s.prompts) &&
        s.prompts.every((p: unknown) => typeof p === 'string'),
    )
    .map((s) => ({ name: s.name, prompts: s.prompts.slice(0, MAX_SET_PROMPTS) }))
    .slice(0, MAX_SETS);
}

/** Saves `set` under its name, replacing a set of that name, newest first. */
export function withPromptSet(sets: readonly PromptSet[], set: PromptSet): PromptSet[] {
  return [set, ...sets.filter((s) => s.name !== set.name)].slice(0, MAX_SETS);
}
