import { describe, expect, it } from 'vitest';
import { MAX_SET_PROMPTS, parsePrompts, readPromptSets, withPromptSet } from './prompt-sets';

describe('prompt sets', () => {
  it('reads one prompt per line, without blank lines, and refuses none or too many', () => {
    expect(parsePrompts(' Capital of France?\n\n  2+2?  \n')).toEqual({ prompts: ['Capital of France?', '2+2?'] });
    expect(parsePrompts('\n \n')).toEqual({ error: 'Write at least one prompt, one per line' });
    expect(parsePrompts(Array.from({ length: MAX_SET_PROMPTS + 1 }, (_, i) => `p${i}`).join('\n'))).toHaveProperty(
      'error',
    );
  });

  it('skips whatever in storage is not a set, and never throws', () => {
    expect(readPromptSets(null)).toEqual([]);
    expect(readPromptSets('{not json')).toEqual([]);
    expect(readPromptSets('{"name":"x"}')).toEqual([]);
    expect(
      readPromptSets(
        JSON.stringify([{ name: 'ok', prompts: ['a'] }, { name: '', prompts: [] }, { name: 'bad', prompts: [1] }, 7]),
      ),
    ).toEqual([{ name: 'ok', prompts: ['a'] }]);
  });

  it('saves a set under its name, replacing the old one, newest first', () => {
    const sets = withPromptSet(
      [
        { name: 'a', prompts: ['1'] },
        { name: 'b', prompts: ['2'] },
      ],
      { name: 'b', prompts: ['3'] },
    );
    expect(sets).toEqual([
      { name: 'b', prompts: ['3'] },
      { name: 'a', prompts: ['1'] },
    ]);
  });
});
