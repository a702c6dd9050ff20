import 'server-only';
import { ApiError } from '@/lib/errors';
import { baseModelSpec, loadBaseModel } from '@/lib/engine/base-models';
import { exportGguf } from '@/lib/engine/gguf';
import { decodeModel, encodeModel } from '@/lib/engine/safetensors';
import { Tokenizer } from '@/lib/engine/tokenizer';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import { artifactWebStream, readArtifactBytes } from '@/lib/storage';
import type { Principal } from './accounts';
import { hfModelDir, hubFetch, servingStatus } from './base-models';
import { allBaseModels, findBaseModel } from '@/lib/catalog/base-models';
import { builtinModelSource } from '@/lib/catalog/builtin-models';
import { hfCheckpointGguf } from './checkpoint-gguf';
import { hfDirProblem } from '@/lib/catalog/hf-folders';
import { tarSize, tarStream } from './tar-archive';
import { requireModel } from './models';

export type CheckpointFormat = 'safetensors' | 'gguf' | 'tar';
/** Storage type of a GGUF file's matrices (norms stay F32). */
export type GgufQuantization = 'F16' | 'Q8_0';

export interface CheckpointFile {
  filename: string;
  contentType: string;
  body: ReadableStream<Uint8Array> | Uint8Array;
  size: number;
}

/**
 * A checkpoint's weights as a download: its own safetensors from the artifact store, or, for step 0 (the
 * untrained base), the base model's weights. `gguf` converts them for llama.cpp and Ollama users: built-in
 * models in F32 (or F16), Hugging Face models in F16 (or Q8_0) with the checkpoint's LoRA adapter merged.
 */
export async function checkpointFile(
  principal: Principal,
  modelId: string,
  step: number,
  format?: CheckpointFormat,
  quantization?: GgufQuantization,
): Promise<CheckpointFile> {
  const model = await requireModel(principal, modelId);
  const checkpoint = await modelsRepo.findCheckpointByStep(await getDb(), model.id, step);
  if (!checkpoint) throw ApiError.notFound('Checkpoint not found');
  if (quantization !== undefined && format !== 'gguf') {
    throw ApiError.valueError(['query', 'quantization'], 'quantization applies to format=gguf only', quantization);
  }
  const name = `${model.name}-step${step}`;
  if (checkpoint.artifactKey?.endsWith('/adapter_model.safetensors')) {
    if (format === 'gguf') return hfGgufFile(name, model.baseModel, checkpoint.artifactKey, quantization ?? 'F16');
    return adapterFile(name, checkpoint.artifactKey, format ?? 'tar', model.baseModel);
  }
  if (format === 'gguf' && !checkpoint.artifactKey && findBaseModel(model.baseModel)?.backend === 'hf') {
    // Step 0 of a Hugging Face model is its base: the same export, nothing merged.
    return hfGgufFile(name, model.baseModel, null, quantization ?? 'F16');
  }
  if (format === 'tar') {
    throw ApiError.valueError(
      ['query', 'format'],
      'tar is the format of LoRA adapter checkpoints; this one is a single safetensors file',
      format,
    );
  }
  const file = await safetensorsFile(model, step);
  if (format !== 'gguf') return file;
  const bytes =
    file.body instanceof Uint8Array ? file.body : new Uint8Array(await new Response(file.body).arrayBuffer());
  // Conversion is a few milliseconds for the built-in model sizes; larger models are served upstream.
  const spec = baseModelSpec(model.baseModel);
  if (!spec) {
    throw new ApiError(
      'bad_request',
      `GGUF export is available for built-in base models only; ${model.baseModel} checkpoints download as safetensors`,
    );
  }
  if (quantization === 'Q8_0') {
    throw ApiError.valueError(
      ['query', 'quantization'],
      'Q8_0 is for Hugging Face models; built-in models export as F32 (default) or F16',
      quantization,
    );
  }
  const weights = decodeModel(bytes);
  try {
    const gguf = exportGguf(weights, new Tokenizer(spec.tokenizer), {
      chatTemplate: spec.chatTemplate,
      name: file.filename.replace(/\.safetensors$/, ''),
      dtype: quantization === 'F16' ? 'F16' : 'F32',
    });
    return {
      filename: file.filename.replace(/\.safetensors$/, '.gguf'),
      contentType: 'application/octet-stream',
      body: gguf,
      size: gguf.byteLength,
    };
  } finally {
    weights.release();
  }
}

async function safetensorsFile(model: Awaited<ReturnType<typeof requireModel>>, step: number): Promise<CheckpointFile> {
  const checkpoint = await modelsRepo.findCheckpointByStep(await getDb(), model.id, step);
  if (!checkpoint) throw ApiError.notFound('Checkpoint not found');
  const filename = `${model.name}-step${step}.safetensors`;
  const contentType = 'application/octet-stream';
  if (checkpoint.artifactKey) {
    const artifact = await artifactWebStream(checkpoint.artifactKey);
    if (!artifact) throw new ApiError('internal', 'Checkpoint weights are missing from the artifact store');
    return { filename, contentType, body: artifact.stream, size: artifact.size };
  }
  const source = builtinModelSource(model.baseModel);
  if (!source && allBaseModels().find((m) => m.id === model.baseModel)?.backend === 'hf') {
    throw new ApiError(
      'not_found',
      `Step 0 is the base model ${model.baseModel} itself (a Hugging Face model); download it from its source, not from here`,
    );
  }
  if (!source) {
    throw new ApiError(
      'not_found',
      `The base model ${model.baseModel} is served upstream; its weights are not available here`,
    );
  }
  if (source.loadWeights) {
    const bytes = await source.loadWeights();
    return { filename, contentType, body: bytes, size: bytes.byteLength };
  }
  const { model: weights } = loadBaseModel(model.baseModel, null);
  try {
    const bytes = encodeModel(weights, { 'tuneboard.base_model': model.baseModel });
    return { filename, contentType, body: bytes, size: bytes.byteLength };
  } finally {
    weights.release();
  }
}

/**
 * Where plain Hugging Face tooling finds an adapter's base model: the folder it was registered with (its `path` in
 * the base-models file, resolved) when it has one, else its id, which is then a Hub id. The worker writes
 * Tuneboard's id there, which `AutoPeftModelForCausalLM` cannot load when the id names a local folder.
 */
function baseModelReference(baseModel: string): string {
  const entry = findBaseModel(baseModel);
  // A Hub-named base keeps its id (PEFT finds it in the Hugging Face cache, or on the Hub), never the server's
  // cache snapshot folder, which means nothing on another machine.
  return (entry?.path && hfModelDir(entry)) || baseModel;
}

/** The adapter's config with `base_model_name_or_path` pointing at baseModelReference; unparsable ones as they are. */
function withBaseReference(config: Uint8Array, baseModel: string): Uint8Array {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(config));
  } catch {
    return config;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return config;
  const rewritten = { ...parsed, base_model_name_or_path: baseModelReference(baseModel) };
  return new TextEncoder().encode(`${JSON.stringify(rewritten, null, 2)}\n`);
}

/**
 * A LoRA checkpoint (a Hugging Face model's): by default a tar of its folder, `adapter_config.json` and
 * `adapter_model.safetensors`, ready for `AutoPeftModelForCausalLM.from_pretrained(folder)`,
 * `PeftModel.from_pretrained(base, folder)` or vLLM's `--lora-modules`; `safetensors` gives the weights alone.
 */
async function adapterFile(
  name: string,
  weightsKey: string,
  format: 'safetensors' | 'tar',
  baseModel: string,
): Promise<CheckpointFile> {
  const missing = () => new ApiError('internal', 'Checkpoint files are missing from the artifact store');
  const weights = await artifactWebStream(weightsKey);
  if (!weights) throw missing();
  if (format === 'safetensors') {
    return {
      filename: `${name}-adapter_model.safetensors`,
      contentType: 'application/octet-stream',
      body: weights.stream,
      size: weights.size,
    };
  }
  await weights.stream.cancel();
  const configKey = weightsKey.replace(/adapter_model\.safetensors$/, 'adapter_config.json');
  const stored = await readArtifactBytes(configKey);
  if (!stored) throw missing();
  const config = withBaseReference(stored, baseModel);
  const open = (key: string) => async () => {
    const a = await artifactWebStream(key);
    if (!a) throw missing();
    return a.stream;
  };
  const entries = [
    {
      name: `${name}/adapter_config.json`,
      size: config.byteLength,
      open: async () =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(config);
            controller.close();
          },
        }),
    },
    { name: `${name}/adapter_model.safetensors`, size: weights.size, open: open(weightsKey) },
  ];
  return {
    filename: `${name}-adapter.tar`,
    contentType: 'application/x-tar',
    body: tarStream(entries),
    size: tarSize(entries),
  };
}

/**
 * A Hugging Face checkpoint (or, with no adapter, its base) as one GGUF file with the adapter merged, written on
 * the GGUF thread from the base model's registered directory. Refusals (no local directory, an architecture or
 * option llama.cpp would run differently) are 400s that say why.
 */
async function hfGgufFile(
  name: string,
  baseModel: string,
  adapterKey: string | null,
  quantization: GgufQuantization,
): Promise<CheckpointFile> {
  const entry = findBaseModel(baseModel);
  const refuse = (why: string) =>
    ApiError.valueError(['query', 'format'], `This checkpoint cannot be exported as GGUF: ${why}`, 'gguf');
  if (!entry || entry.backend !== 'hf')
    throw refuse(`its base model ${baseModel} is not a registered Hugging Face model`);
  const dir = hfModelDir(entry);
  const hub = hubFetch(entry);
  // A Hub-named base still downloading (or failed) on this server: the export can follow once it is there.
  if (hub && hub.state !== 'ready') {
    const status = servingStatus(entry);
    throw new ApiError(
      'unavailable',
      `The base model ${baseModel} is not on this server yet: ${status.available ? 'retry shortly' : status.reason}`,
      { headers: { 'retry-after': '30' } },
    );
  }
  const problem = hfDirProblem(dir);
  if (!dir || problem) throw refuse(`its base model ${baseModel}: ${problem ?? 'no local directory'}`);
  let adapter: { config: unknown; weights: Uint8Array } | null = null;
  if (adapterKey) {
    const configKey = adapterKey.replace(/adapter_model\.safetensors$/, 'adapter_config.json');
    const [weights, config] = await Promise.all([readArtifactBytes(adapterKey), readArtifactBytes(configKey)]);
    if (!weights || !config) throw new ApiError('internal', 'Checkpoint files are missing from the artifact store');
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(config));
    } catch {
      throw refuse('its adapter_config.json is not valid JSON');
    }
    adapter = { config: parsed, weights };
  }
  const file = await hfCheckpointGguf({ dir, adapter, matrixType: quantization, name });
  return {
    filename: `${name}-${quantization.toLowerCase()}.gguf`,
    contentType: 'application/octet-stream',
    body: file.stream,
    size: file.size,
  };
}
