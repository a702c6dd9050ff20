import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { idSchema } from '@/lib/schemas/common';
import { checkpointFile } from '@/lib/services/checkpoint-files';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]/checkpoints/[step]/download', {
  GET: route(
    {
      summary:
        'Download a checkpoint: safetensors (config in its metadata) or GGUF for llama.cpp / Ollama; a LoRA adapter as a tar of its two PEFT files',
      tag: 'checkpoints',
      extension: true,
      params: z.object({
        model_id: idSchema,
        step: z
          .string()
          .regex(/^\d{1,9}$/)
          .transform(Number),
      }),
      notFound: 'Checkpoint not found',
      query: z.object({
        format: z
          .enum(['safetensors', 'gguf', 'tar'])
          .optional()
          .describe(
            'Default: safetensors for built-in models, tar (adapter_config.json + adapter_model.safetensors) for LoRA adapters. gguf: one llama.cpp / Ollama file (a LoRA checkpoint with its adapter merged into the base)',
          ),
        quantization: z
          .enum(['F16', 'Q8_0'])
          .optional()
          .describe(
            'format=gguf only: storage type of the matrices. Default F16 for Hugging Face models, F32 for built-in ones (which take F16 but not Q8_0)',
          ),
      }),
    },
    async ({ principal, params, query }) => {
      const file = await checkpointFile(principal, params.model_id, params.step, query.format, query.quantization);
      return new Response(file.body as BodyInit, {
        headers: {
          'content-type': file.contentType,
          'content-length': String(file.size),
          'content-disposition': `attachment; filename="${file.filename.replace(/[^\w.-]/g, '_')}"`,
        },
      });
    },
  ),
});
