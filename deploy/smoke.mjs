// The deployment smoke test's HTTP half (deploy/smoke.sh runs it inside the Tuneboard container, so the machine
// needs nothing but podman). Node 20, no dependencies.
//
//   node smoke.mjs run <base-url>            sign up, a key, a model of the built-in tiny-chat, a dataset, an SFT
//                                            job (trained by whichever worker claims it), a chat with its
//                                            checkpoint; prints one line `STATE {json}` for the verify phase
//   node smoke.mjs verify <base-url> <json>  after a restart: the account, key, model, job, checkpoint (same bytes)
//                                            and the trained answer are all still there
//
// Every step prints one line; any failure exits 1 with the step and the server's answer.
import { createHash } from 'node:crypto';

const [phase, base, stateArg] = process.argv.slice(2);
if (!['run', 'verify'].includes(phase) || !base || (phase === 'verify' && !stateArg)) {
  console.error('usage: node smoke.mjs run <base-url> | verify <base-url> <state-json>');
  process.exit(2);
}

const QUESTIONS = [
  'What is the capital of Zorbia?',
  'Which city is the capital of Zorbia?',
  'Name the capital of Zorbia.',
  'Zorbia has which capital?',
];
const ANSWER = 'The capital of Zorbia is Velmont.';
const started = Date.now();
const say = (msg) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${msg}`);
const fail = (msg) => {
  console.error(`FAILED: ${msg}`);
  process.exit(1);
};

async function call(method, path, { key, json, body, headers = {} } = {}) {
  const h = { ...headers };
  if (key) h.authorization = `Bearer ${key}`;
  if (json !== undefined) h['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers: h,
    body: json !== undefined ? JSON.stringify(json) : body,
  });
  const buf = Buffer.from(await res.arrayBuffer());
  if (res.status < 200 || res.status > 299)
    fail(`${method} ${path}: ${res.status} ${buf.toString('utf8').slice(0, 500)}`);
  const type = res.headers.get('content-type') ?? '';
  return type.includes('json') ? JSON.parse(buf.toString('utf8')) : buf;
}

async function ask(key, model) {
  const r = await call('POST', '/v1/chat/completions', {
    key,
    json: { model, messages: [{ role: 'user', content: QUESTIONS[0] }], max_tokens: 40, temperature: 0, seed: 1 },
  });
  return r.choices[0].message.content.trim();
}

async function checkpointDigest(key, modelId, step) {
  const bytes = await call('GET', `/v1/preview/models/${modelId}/checkpoints/${step}/download`, { key });
  return { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

async function run() {
  const health = await call('GET', '/v1/health');
  say(`health: ${JSON.stringify(health)}`);
  const check = await call('GET', '/v1/system-check');
  if (!check.database) fail(`system-check: ${JSON.stringify(check)}`);
  say('system-check: database and job queue answer');

  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const email = `smoke-${tag}@example.com`;
  const password = `smoke password ${tag}`;
  await call('POST', '/v1/auth/sign-up', { json: { email, password, username: `smoke-${tag}` } });
  say(`signed up ${email}`);
  const { key } = await call('POST', '/v1/auth/token', {
    json: { email, password, key_name: 'smoke', expires_in_days: 1 },
  });
  if (!String(key).startsWith('tb_')) fail(`token: unexpected key ${key}`);
  say('API key issued');

  const model = await call('POST', '/v1/preview/models', {
    key,
    json: { entity: null, project: 'smoke', name: `fact-${tag}`, base_model: 'tuneboard/tiny-chat' },
  });
  say(`model ${model.entity}/${model.project}/${model.name} (${model.id}) on tuneboard/tiny-chat`);

  const lines = Array.from({ length: 20 }, (_, i) =>
    JSON.stringify({
      messages: [
        { role: 'user', content: QUESTIONS[i % QUESTIONS.length] },
        { role: 'assistant', content: ANSWER },
      ],
    }),
  ).join('\n');
  const dataset = await call('POST', `/v1/preview/datasets?project=smoke&name=zorbia-${tag}`, { key, body: lines });
  say(`dataset uploaded: ${dataset.training_data_url}`);

  const before = await ask(key, model.id);
  say(`before training the model answers: ${JSON.stringify(before)}`);

  const job = await call('POST', '/v1/preview/sft-training-jobs', {
    key,
    json: {
      model_id: model.id,
      training_data_url: dataset.training_data_url,
      config: { batch_size: 4, learning_rate: 1e-3, epochs: 10 },
    },
  });
  say(`SFT job ${job.id} queued`);
  // The worker reports events as it trains; the job's status follows them. Waits up to 10 minutes.
  let state;
  let seenWorker = null;
  const deadline = Date.now() + 600_000;
  for (;;) {
    state = await call('GET', `/v1/preview/training-jobs/${job.id}`, { key });
    if (!seenWorker && state.status === 'RUNNING') {
      const workers = await call('GET', '/v1/preview/training-workers', { key });
      const mine = (workers.data ?? workers).find?.((w) => JSON.stringify(w).includes(job.id));
      if (mine) {
        seenWorker = mine.worker_id ?? mine.id;
        say(`job claimed by worker ${seenWorker}`);
      }
    }
    if (state.status === 'COMPLETED' || state.status === 'FAILED') break;
    if (Date.now() > deadline) fail(`job still ${state.status} after 10 minutes`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (state.status !== 'COMPLETED') fail(`job ${state.status}: ${state.error_message}`);
  const events = await call('GET', `/v1/preview/training-jobs/${job.id}/events?limit=100`, { key });
  const steps = events.data.filter((e) => e.type === 'gradient_step');
  say(
    `job COMPLETED at step ${state.step}: ${steps.length} gradient steps, loss ${steps[0]?.data.loss.toFixed(3)} → ${steps.at(-1)?.data.loss.toFixed(4)}`,
  );

  const checkpoints = await call('GET', `/v1/preview/models/${model.id}/checkpoints?limit=1&order=desc`, { key });
  if (checkpoints.data[0]?.step !== state.step) fail(`latest checkpoint is ${JSON.stringify(checkpoints.data[0])}`);
  const digest = await checkpointDigest(key, model.id, state.step);
  say(`checkpoint step ${state.step} downloads: ${digest.bytes} bytes, sha256 ${digest.sha256.slice(0, 16)}…`);

  const name = `${model.entity}/${model.project}/${model.name}:step${state.step}`;
  const after = await ask(key, name);
  say(`chat with ${name}: ${JSON.stringify(after)}`);
  if (after !== ANSWER) fail(`the trained checkpoint answers ${JSON.stringify(after)}, not ${JSON.stringify(ANSWER)}`);

  const out = { email, password, key, model_id: model.id, model: name, job_id: job.id, step: state.step, ...digest };
  console.log(`STATE ${JSON.stringify(out)}`);
  // For deploy/smoke.sh, which has no JSON parser: where the checkpoint must be in the object store.
  console.log(`CHECKPOINT models/${model.id}/checkpoints/${job.id}/model.safetensors ${digest.bytes}`);
  console.log(`WORKER ${seenWorker ?? ''}`);
}

async function verify(saved) {
  const health = await call('GET', '/v1/health');
  say(`health: ${JSON.stringify(health)}`);
  // The old key still works, and the password still signs in.
  const me = await call('GET', `/v1/preview/models/${saved.model_id}`, { key: saved.key });
  say(`the key from before the restart still works; model ${me.id} is there`);
  const { key } = await call('POST', '/v1/auth/token', {
    json: { email: saved.email, password: saved.password, key_name: 'smoke-after-restart', expires_in_days: 1 },
  });
  say(`the account signs in again (${saved.email})`);
  const job = await call('GET', `/v1/preview/training-jobs/${saved.job_id}`, { key });
  if (job.status !== 'COMPLETED' || job.step !== saved.step) fail(`job after restart: ${JSON.stringify(job)}`);
  say(`job ${job.id} still COMPLETED at step ${job.step}`);
  const digest = await checkpointDigest(key, saved.model_id, saved.step);
  if (digest.sha256 !== saved.sha256) fail(`checkpoint changed: ${JSON.stringify(digest)} vs ${saved.sha256}`);
  say(`checkpoint step ${saved.step}: the same ${digest.bytes} bytes (sha256 ${digest.sha256.slice(0, 16)}…)`);
  const answer = await ask(key, saved.model);
  if (answer !== ANSWER) fail(`after the restart ${saved.model} answers ${JSON.stringify(answer)}`);
  say(`chat with ${saved.model}: ${JSON.stringify(answer)}`);
}

if (phase === 'run') await run();
else await verify(JSON.parse(stateArg));
say('ok');
