import { describe, expect, it } from 'vitest';
import { generate } from '@/lib/engine/generate';
import { Model } from '@/lib/engine/model';
import { Tokenizer } from '@/lib/engine/tokenizer';
import { TINY_TEST_CONFIG } from '@/tests/support/inference';
import { toGenerationRequest, type WireSequence } from './wire';

const tok = new Tokenizer();
const EOS = tok.specialTokenId('<|im_end|>') as number;
const model = Model.create({ ...TINY_TEST_CONFIG, vocab: tok.vocabSize }, { seed: 9 });

function sequence(extra: Partial<WireSequence>): WireSequence {
  return {
    promptTokenIds: tok.encode('<|im_start|>assistant\n'),
    maxTokens: 8,
    // Greedy, with the stop id pushed far above everything else.
    sampling: { temperature: 0, logitBias: [[120, 100]], stopTokenIds: [120] },
    eosTokenId: EOS,
    seed: '1',
    choice: 0,
    structuredOutput: { constraint: { kind: 'regex', pattern: 'ab' } },
    ...extra,
  };
}

describe('structured outputs end only at the tokenizer EOS (as vLLM grammar backends)', () => {
  it('regex ab + stop_token_ids [120]: the stop id is not a terminator, EOS is', async () => {
    const [r] = await generate(model, tok, [toGenerationRequest(sequence({}), tok)]);
    expect(r.tokens.map((t) => t.tokenId)).toEqual([97, 98, EOS]);
    expect([r.finishReason, r.stopReason, r.text]).toEqual(['stop', null, 'ab']);
  });

  it('ignore_eos: after the grammar accepted EOS it masks nothing (no forced EOS at logprob 0)', async () => {
    const [r] = await generate(model, tok, [toGenerationRequest(sequence({ ignoreEos: true, maxTokens: 6 }), tok)]);
    const ids = r.tokens.map((t) => t.tokenId);
    expect(ids.slice(0, 3)).toEqual([97, 98, EOS]);
    // The unconstrained model now follows the logit bias: the stop id ends the sequence.
    expect(ids[3]).toBe(120);
    expect([r.finishReason, r.stopReason]).toEqual(['stop', 120]);
  });
});
