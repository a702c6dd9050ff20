import { methods, route } from '@/lib/api/route';
import { idempotencyKey } from '@/lib/api/tinker-headers';
import { sampleRequestSchema, samplePromptTokens, untypedApiFutureSchema } from '@/lib/schemas/tinker';
import { submitSample } from '@/lib/services/tinker/sampling';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/asample', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        "Sample from a sampling client (a base model or sampler weights) on the engine that serves it to chat: num_samples sequences of token ids with each token's logprob, and prompt logprobs when asked",
      // A prompt of many thousands of token ids.
      bodyLimit: 'large',
      body: sampleRequestSchema,
      response: untypedApiFutureSchema,
    },
    async ({ req, principal, body }) =>
      submitSample(
        principal,
        {
          prompt: Array.from(samplePromptTokens(body)),
          num_samples: body.num_samples,
          sampling_params: body.sampling_params,
          prompt_logprobs: body.prompt_logprobs,
          topk_prompt_logprobs: body.topk_prompt_logprobs,
          sampling_session_id: body.sampling_session_id,
          seq_id: body.seq_id,
          base_model: body.base_model,
          model_path: body.model_path,
        },
        idempotencyKey(req),
      ),
  ),
});
