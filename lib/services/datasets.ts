import { ApiError } from '@/lib/api/errors';
import { listArtifacts, putArtifact, readArtifactText } from '@/lib/storage';
import { entityByName, type Principal } from './accounts';
import { parseSftJsonl, SftDataError, type SftExample } from './sft-data';

/**
 * SFT datasets live in the artifact store under `datasets/<entity id>/<project>/<name>/v<N>/`. A
 * `training_data_url` names one as `wandb-artifact:///entity/project/name:vN` (compat §2.7).
 */
const URL_PATTERN = /^wandb-artifact:\/\/\/?([^/:]+)\/([^/:]+)\/([^/:]+)(?::([^/:]+))?$/;

export interface DatasetRef {
  entity: string;
  project: string;
  name: string;
  version: number;
  file: string;
  key: string;
}

const datasetPrefix = (entityId: string, project: string, name: string) =>
  `datasets/${entityId}/${encodeURIComponent(project)}/${encodeURIComponent(name)}`;

async function versions(prefix: string): Promise<number[]> {
  return (await listArtifacts(prefix))
    .map((n) => /^v(\d+)$/.exec(n)?.[1])
    .filter((v): v is string => v !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

const urlError = (text: string, url: string) => ApiError.valueError(['body', 'training_data_url'], text, url);

/** Resolves a reference to the file the job will read: train.jsonl, else trajectories.jsonl, else the first *.jsonl. */
export async function resolveTrainingData(principal: Principal, url: string): Promise<DatasetRef> {
  const match = URL_PATTERN.exec(url.trim());
  if (!match) {
    throw urlError('training_data_url must look like wandb-artifact:///<entity>/<project>/<name>:<version>', url);
  }
  const [, entityName, project, name, versionText] = match;
  const entity = entityByName(principal, entityName);
  const prefix = entity ? datasetPrefix(entity.id, project, name) : undefined;
  const available = prefix ? await versions(prefix) : [];
  if (!prefix || available.length === 0)
    throw urlError(`Training data artifact not found: ${entityName}/${project}/${name}`, url);
  let version: number;
  if (versionText === undefined || versionText === 'latest') version = available[available.length - 1];
  else if (/^v\d+$/.test(versionText) && available.includes(Number(versionText.slice(1))))
    version = Number(versionText.slice(1));
  else throw urlError(`Training data artifact version not found: ${entityName}/${project}/${name}:${versionText}`, url);

  const files = await listArtifacts(`${prefix}/v${version}`);
  const file =
    ['train.jsonl', 'trajectories.jsonl'].find((f) => files.includes(f)) ?? files.find((f) => f.endsWith('.jsonl'));
  if (!file)
    throw urlError(`Training data artifact ${entityName}/${project}/${name}:v${version} has no .jsonl file`, url);
  return { entity: entityName, project, name, version, file, key: `${prefix}/v${version}/${file}` };
}

/** Reads and validates every line now, so a bad dataset is a 422 at creation rather than a failed job (compat §2.7). */
export async function loadTrainingExamples(ref: DatasetRef, url: string): Promise<SftExample[]> {
  const text = await readArtifactText(ref.key);
  if (text === undefined) throw urlError(`Training data file ${ref.file} is missing`, url);
  try {
    const examples = parseSftJsonl(ref.file, text);
    if (examples.length === 0) throw urlError(`${ref.file} has no training examples`, url);
    return examples;
  } catch (err) {
    if (err instanceof SftDataError) throw urlError(err.message, url);
    throw err;
  }
}

/** Stores a new version of a dataset and returns its reference URL. */
export async function storeDataset(
  principal: Principal,
  input: { entity?: string | null; project: string; name: string; files: Record<string, string | Uint8Array> },
) {
  const entity = input.entity == null ? principal.personalEntity : entityByName(principal, input.entity);
  if (!entity) throw new ApiError('forbidden', `Entity '${input.entity}' is not accessible with this API key`);
  const prefix = datasetPrefix(entity.id, input.project, input.name);
  const existing = await versions(prefix);
  const version = existing.length ? existing[existing.length - 1] + 1 : 0;
  for (const [file, data] of Object.entries(input.files)) await putArtifact(`${prefix}/v${version}/${file}`, data);
  return {
    training_data_url: `wandb-artifact:///${entity.name}/${input.project}/${input.name}:v${version}`,
    version,
  };
}
