/**
 * Several files in one byte array, so a Hugging Face model directory (config, tokenizer, weight shards) or
 * a PEFT adapter (config + weights) travels to an inference thread as one transferable buffer through the
 * same "need weights" channel as a built-in model's single file. Layout: u32 LE header length, a JSON
 * header {name: [offset, length]} relative to the data section, then the files' bytes.
 */
export function packFiles(files: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const header: Record<string, [number, number]> = {};
  let offset = 0;
  for (const [name, bytes] of files) {
    header[name] = [offset, bytes.length];
    offset += bytes.length;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(4 + json.length + offset);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 4);
  let at = 4 + json.length;
  for (const bytes of files.values()) {
    out.set(bytes, at);
    at += bytes.length;
  }
  return out;
}

export function unpackFiles(bytes: Uint8Array): Map<string, Uint8Array> {
  if (bytes.length < 4) throw new Error('file bundle: too short');
  const n = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  if (4 + n > bytes.length) throw new Error('file bundle: header out of range');
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + n))) as Record<string, [number, number]>;
  const data = bytes.subarray(4 + n);
  const out = new Map<string, Uint8Array>();
  for (const [name, [offset, length]] of Object.entries(header)) {
    if (!(offset >= 0 && length >= 0 && offset + length <= data.length))
      throw new Error(`file bundle: ${name} out of range`);
    out.set(name, data.subarray(offset, offset + length));
  }
  return out;
}

const json = (files: Map<string, Uint8Array>, name: string, required: boolean): unknown => {
  const b = files.get(name);
  if (!b) {
    if (required) throw new Error(`model directory lacks ${name}`);
    return undefined;
  }
  try {
    return JSON.parse(new TextDecoder().decode(b));
  } catch {
    throw new Error(`${name} is not valid JSON`);
  }
};

/** The parsed pieces of a bundled model directory (see HfModelFiles). */
export function hfFilesFromBundle(bytes: Uint8Array) {
  const files = unpackFiles(bytes);
  const weights = [...files.keys()]
    .filter((k) => k.endsWith('.safetensors'))
    .sort()
    .map((k) => files.get(k)!);
  if (weights.length === 0) throw new Error('model directory has no .safetensors weights');
  return {
    config: json(files, 'config.json', true),
    tokenizer: json(files, 'tokenizer.json', true),
    tokenizerConfig: json(files, 'tokenizer_config.json', false) ?? {},
    generationConfig: json(files, 'generation_config.json', false),
    weights,
  };
}

/** A bundled PEFT adapter: adapter_config.json and adapter_model.safetensors. */
export function adapterFromBundle(bytes: Uint8Array): { config: unknown; weights: Uint8Array } {
  const files = unpackFiles(bytes);
  const weights = files.get('adapter_model.safetensors');
  if (!weights) throw new Error('adapter lacks adapter_model.safetensors');
  return { config: json(files, 'adapter_config.json', true), weights };
}
