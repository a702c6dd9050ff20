import { beforeAll, describe, expect, it } from 'vitest';
import { sweepTinker } from '@/lib/services/tinker/sweeper';
import { ProtoWriter } from '@/lib/tinker/proto-wire';
import { createUser, type TestUser } from '../support/helpers';
import {
  ceDatum,
  forwardBackwardBody,
  forwardResult,
  HF_BASE,
  ok,
  ScriptedWorker,
  tinker,
  trainingClient,
  useHfBaseModels,
  wireTensor,
} from './support';

beforeAll(() => {
  useHfBaseModels();
  // A pending retrieve_future answers try_again after this long (docs/tinker.md §2.2).
  process.env.TUNEBOARD_TINKER_WAIT_SECONDS = '0.3';
});

const retrieve = (user: TestUser, requestId: string, accept?: string) =>
  tinker(user, 'POST', '/api/v1/retrieve_future', { request_id: requestId }, accept ? { accept } : {});

describe('authentication and the service routes', () => {
  it('takes X-API-Key: tml-<key> or a bearer key, and says how to write the key otherwise', async () => {
    const user = await createUser();
    expect((await tinker(user, 'GET', '/api/v1/get_server_capabilities')).status).toBe(200);
    const bearer = await tinker(null, 'GET', '/api/v1/get_server_capabilities', undefined, {
      authorization: `Bearer ${user.key}`,
    });
    expect(bearer.status).toBe(200);
    const none = await tinker(null, 'GET', '/api/v1/get_server_capabilities');
    expect(none.status).toBe(401);
    expect(none.body.detail).toMatch(/X-API-Key: tml-/);
    const wrong = await tinker(null, 'GET', '/api/v1/get_server_capabilities', undefined, {
      'x-api-key': 'tml-tb_nope',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail).toMatch(/TINKER_API_KEY/);
  });

  it('answers healthz and client/config without a key, with the flags both SDK eras need', async () => {
    expect((await tinker(null, 'GET', '/api/v1/healthz')).body).toEqual({ status: 'ok' });
    const cfg = await ok(tinker(null, 'POST', '/api/v1/client/config', { sdk_version: '0.24.1' }));
    expect(cfg).toMatchObject({
      use_pyqwest_transport: false,
      pjwt_auth_enabled: false,
      proto_write_fwdbwd: false,
      proto_compress_fwdbwd: true,
      create_model_via_load_weights: false,
    });
    expect(await ok(tinker(null, 'POST', '/api/v1/client/dynamic_config', { sdk_version: '0.25.0' }))).toEqual({
      refresh_interval_sec: 300,
    });
    const user = await createUser();
    expect(await ok(tinker(user, 'POST', '/api/v1/telemetry', { events: [{}] }))).toEqual({ status: 'accepted' });
  });

  it('lists the hf base models a connected worker can train', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    await worker.poll({ acceptNew: false });
    const caps = await ok(tinker(user, 'GET', '/api/v1/get_server_capabilities'));
    expect(caps.supported_models.map((m: { model_name: string }) => m.model_name)).toContain(HF_BASE);
  });

  it('refuses project_ids outside the caller and ids that are not this server’s with 4xx, never 500', async () => {
    const user = await createUser();
    const other = await tinker(user, 'POST', '/api/v1/create_session', {
      tags: [],
      sdk_version: '0.25.0',
      project_id: 'someone-elses-team/proj',
    });
    expect(other.status).toBe(400);
    expect(other.body.detail).toMatch(/not a member/);
    for (const [url, body] of [
      ['/api/v1/session_heartbeat', { session_id: 'not-a-uuid' }],
      ['/api/v1/get_info', { model_id: 'x:train:0' }],
      ['/api/v1/retrieve_future', { request_id: '\u0001' }],
      ['/api/v1/optim_step', { model_id: 'nope', adam_params: {} }],
    ] as const) {
      const a = await tinker(user, 'POST', url, body);
      expect(a.status, `${url} ${JSON.stringify(a.body)}`).toBe(404);
    }
  });
});

describe('training clients, ordering and futures', () => {
  it('a create_model waits, saying why, until a worker takes it; get_info names base model and LoRA rank', async () => {
    const user = await createUser();
    const session = await ok(tinker(user, 'POST', '/api/v1/create_session', { tags: [], sdk_version: '0.25.0' }));
    const created = await ok(
      tinker(user, 'POST', '/api/v1/create_model', {
        session_id: session.session_id,
        model_seq_id: 0,
        base_model: HF_BASE,
        lora_config: { rank: 4, train_unembed: false },
      }),
    );
    const pending = await ok(retrieve(user, created.request_id));
    expect(pending).toMatchObject({ type: 'try_again', queue_state: 'paused_capacity' });
    // A resent create answers the same future.
    const again = await ok(
      tinker(user, 'POST', '/api/v1/create_model', {
        session_id: session.session_id,
        model_seq_id: 0,
        base_model: HF_BASE,
        lora_config: { rank: 4 },
      }),
    );
    expect(again).toEqual(created);
    const worker = new ScriptedWorker();
    const { requests } = await worker.poll();
    const create = requests.find((r) => r.model_id === created.model_id)!;
    expect(create.payload).toEqual({
      base_model: HF_BASE,
      base_model_path: 'models/tiny-qwen3',
      lora: { rank: 4, alpha: 32, seed: null, train_mlp: true, train_attn: true, train_unembed: false },
    });
    worker.held.push(created.model_id);
    await worker.answer(create.request_id, { trainable_parameters: 10 });
    expect(await ok(retrieve(user, created.request_id))).toEqual({ type: 'create_model', model_id: created.model_id });
    const info = await ok(tinker(user, 'POST', '/api/v1/get_info', { model_id: created.model_id }));
    expect(info).toMatchObject({ model_id: created.model_id, is_lora: true, lora_rank: 4, model_name: HF_BASE });
    // The model is a Tuneboard model of the session's default project.
    const models = await ok(
      tinker(user, 'GET', `/v1/preview/models/${created.model_id}`, undefined, { authorization: `Bearer ${user.key}` }),
    );
    expect(models).toMatchObject({ project: 'tinker', base_model: HF_BASE });
  });

  it('refuses base models a worker cannot train and LoRA settings that train nothing', async () => {
    const user = await createUser();
    const session = await ok(tinker(user, 'POST', '/api/v1/create_session', { tags: [], sdk_version: '0.25.0' }));
    const builtin = await tinker(user, 'POST', '/api/v1/create_model', {
      session_id: session.session_id,
      model_seq_id: 0,
      base_model: 'tuneboard/tiny-chat',
    });
    expect(builtin.status).toBe(400);
    expect(builtin.body.detail).toMatch(/Hugging Face/);
    const unknown = await tinker(user, 'POST', '/api/v1/create_model', {
      session_id: session.session_id,
      model_seq_id: 1,
      base_model: 'no/such-model',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain(HF_BASE);
    const nothing = await tinker(user, 'POST', '/api/v1/create_model', {
      session_id: session.session_id,
      model_seq_id: 2,
      base_model: HF_BASE,
      lora_config: { rank: 8, train_mlp: false, train_attn: false, train_unembed: false },
    });
    expect(nothing.status).toBe(422);
  });

  it('runs requests in seq_id order whatever order they arrive in, each exactly once', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    // The SDK sends the chunks of one forward_backward concurrently, the first one last.
    const second = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 2)));
    expect((await worker.poll()).requests).toEqual([]);
    const first = await ok(
      tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1), { 'x-idempotency-key': 'k1' }),
    );
    // A resend (the SDK's retry of a lost answer) is the same future, by seq_id or by idempotency key.
    expect(await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1)))).toEqual(first);
    const byKey = await ok(
      tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1), { 'x-idempotency-key': 'k1' }),
    );
    expect(byKey.request_id).toBe(first.request_id);

    let polled = await worker.poll();
    expect(polled.requests.map((r) => [r.seq_id, r.kind])).toEqual([[1, 'forward_backward']]);
    expect(polled.requests[0].payload.data[0].tokens).toEqual(wireTensor([1, 2, 3], 'int32'));
    expect(polled.requests[0].payload.data[0].loss_fn_inputs.target_tokens).toEqual(wireTensor([2, 3, 4], 'int64'));
    // Handed out but not answered: handed again to the same worker (its first answer was lost), to no one else.
    expect((await new ScriptedWorker().poll()).requests.filter((r) => r.model_id === modelId)).toEqual([]);
    expect((await worker.poll()).requests.map((r) => r.request_id)).toEqual([first.request_id]);
    await worker.answer(first.request_id, forwardResult(1, 3));
    polled = await worker.poll();
    expect(polled.requests.map((r) => r.request_id)).toEqual([second.request_id]);
    await worker.answer(second.request_id, forwardResult(1, 3));
    // A resent answer is harmless.
    expect((await worker.answer(second.request_id, forwardResult(1, 3))).status).toBe(200);
    // A resend after its request ran (its seq_id is now behind the next one) is still the same future.
    expect(await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1)))).toEqual(first);

    const json = await ok(retrieve(user, first.request_id, 'application/json'));
    expect(json.metrics).toEqual({ 'loss:sum': 1.5 });
    expect(json.loss_fn_outputs[0].logprobs).toEqual({ data: [-0.5, -0.5, -0.5], dtype: 'float32', shape: [3] });
    expect(json.stats).toBeUndefined();
    const proto = await retrieve(user, first.request_id, 'application/x-protobuf');
    expect(proto.status).toBe(200);
    expect(proto.headers.get('content-type')).toBe('application/x-protobuf');
    expect(proto.raw.byteLength).toBeGreaterThan(10);
  });

  it('a request refused at submission uses up its seq_id; the ones after it do not wait', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const bad = await tinker(
      user,
      'POST',
      '/api/v1/forward_backward',
      forwardBackwardBody(modelId, 1, [ceDatum([1])], 'no_such_loss'),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/no_such_loss/);
    // The same for a protobuf body (SDK 0.25): its ids are read from the bytes the decoder refused.
    const proto = new ProtoWriter();
    proto.string(1, modelId);
    proto.int(2, 2);
    proto.string(4, 'no_such_loss');
    const badProto = await tinker(user, 'POST', '/api/v1/forward_backward', proto.finish(), {
      'content-type': 'application/x-protobuf',
    });
    expect(badProto.status).toBe(400);
    const good = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 3)));
    const polled = await worker.poll();
    expect(polled.requests.map((r) => r.request_id)).toEqual([good.request_id]);
  });

  it('a request without seq_id takes the next one; a later explicit seq_id equal to it is refused, not deduplicated', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const adam = { learning_rate: 0.01 };
    const seqless = await ok(tinker(user, 'POST', '/api/v1/optim_step', { model_id: modelId, adam_params: adam }));
    const clash = await tinker(user, 'POST', '/api/v1/optim_step', { model_id: modelId, seq_id: 1, adam_params: adam });
    expect(clash.status).toBe(400);
    expect(clash.body.detail).toMatch(/seq_id 1 .* sent without a seq_id/);
    const next = await ok(
      tinker(user, 'POST', '/api/v1/optim_step', { model_id: modelId, seq_id: 2, adam_params: adam }),
    );
    expect(next.request_id).not.toBe(seqless.request_id);
  });

  it('a retrieve_future held open answers with the result the worker posts meanwhile', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const fb = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1)));
    const [req] = (await worker.poll()).requests;
    // Held open (it waits TUNEBOARD_TINKER_WAIT_SECONDS, 0.3 s here) while the answer comes: woken with the row.
    const held = retrieve(user, fb.request_id, 'application/json');
    await new Promise((r) => setTimeout(r, 20));
    expect((await worker.answer(req.request_id, forwardResult(1, 3))).status).toBe(200);
    let got = await ok(held);
    while (got.type === 'try_again') got = await ok(retrieve(user, fb.request_id, 'application/json'));
    expect(got.metrics).toEqual({ 'loss:sum': 1.5 });
    expect(got.loss_fn_outputs[0].logprobs).toEqual({ data: [-0.5, -0.5, -0.5], dtype: 'float32', shape: [3] });
    const failed = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 2)));
    const [next] = (await worker.poll()).requests;
    const heldFailure = retrieve(user, failed.request_id);
    await new Promise((r) => setTimeout(r, 20));
    await worker.fail(next.request_id, 'datum 0 is too long');
    let failure = await ok(heldFailure);
    while (failure.type === 'try_again') failure = await ok(retrieve(user, failed.request_id));
    expect(failure).toEqual({ error: 'datum 0 is too long', category: 'user' });
  });

  it('an answer moves past the seq_ids after it that were refused at submission', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const first = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1)));
    const [running] = (await worker.poll()).requests;
    expect(running.request_id).toBe(first.request_id);
    for (const seq of [2, 3]) {
      const bad = await tinker(
        user,
        'POST',
        '/api/v1/forward_backward',
        forwardBackwardBody(modelId, seq, [ceDatum([1])], 'no_such_loss'),
      );
      expect(bad.status).toBe(400);
    }
    const fourth = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 4)));
    await worker.answer(first.request_id, forwardResult(1, 3));
    expect((await worker.poll()).requests.map((r) => [r.seq_id, r.request_id])).toEqual([[4, fourth.request_id]]);
  });

  it('optim_step adds a point to the training curve from the forward_backward calls before it', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const fb1 = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1)));
    const fb2 = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 2)));
    const step = await ok(
      tinker(user, 'POST', '/api/v1/optim_step', {
        model_id: modelId,
        seq_id: 3,
        adam_params: { learning_rate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0, grad_clip_norm: 1 },
      }),
    );
    for (const id of [fb1.request_id, fb2.request_id]) {
      const [r] = (await worker.poll()).requests;
      expect(r.request_id).toBe(id);
      // cookbook-style weights that sum to 1 per sequence: the curve's loss is per unit of weight (the mean NLL)
      const result = forwardResult(1, 3, 3);
      await worker.answer(id, { ...result, stats: { ...result.stats, weight_sum: 1 } });
    }
    const [optim] = (await worker.poll()).requests;
    expect(optim.payload).toEqual({
      adam_params: { learning_rate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0, grad_clip_norm: 1 },
    });
    await worker.answer(optim.request_id, {
      metrics: { 'optim/grad_norm': 2, 'optim/learning_rate': 1e-3, 'optim/step': 1 },
      stats: { grad_norm: 2, learning_rate: 1e-3, seconds: 0.01 },
    });
    expect(await ok(retrieve(user, step.request_id))).toEqual({
      metrics: { 'optim/grad_norm': 2, 'optim/learning_rate': 1e-3, 'optim/step': 1 },
    });
    const history = await ok(
      tinker(
        user,
        'GET',
        `/v1/preview/models/${modelId}/history?axis=gradient_step&keys=loss,loss_sum,grad_norm`,
        undefined,
        {
          authorization: `Bearer ${user.key}`,
        },
      ),
    );
    const series = Object.fromEntries(
      history.series.map((s: { name: string; points: [number, number][] }) => [s.name, s.points]),
    );
    expect(series).toEqual({ loss: [[1, 3]], loss_sum: [[1, 6]], grad_norm: [[1, 2]] });
  });
});

describe('saved weights', () => {
  const files = {
    'adapter_config.json': new TextEncoder().encode(JSON.stringify({ r: 8, lora_alpha: 32, peft_type: 'LORA' })),
    'adapter_model.safetensors': new Uint8Array([1, 2, 3, 4]),
    'optimizer.safetensors': new Uint8Array([5, 6, 7]),
  };

  async function save(
    user: TestUser,
    worker: ScriptedWorker,
    modelId: string,
    kind: 'state' | 'sampler',
    seq: number,
    name?: string,
  ) {
    const url = kind === 'state' ? '/api/v1/save_weights' : '/api/v1/save_weights_for_sampler';
    const future = await ok(
      tinker(user, 'POST', url, {
        model_id: modelId,
        seq_id: seq,
        ...(name ? { path: name } : { sampling_session_seq_id: seq }),
      }),
    );
    const [req] = (await worker.poll()).requests;
    expect(req.request_id).toBe(future.request_id);
    const names = kind === 'state' ? Object.keys(files) : ['adapter_config.json', 'adapter_model.safetensors'];
    for (const f of names)
      expect((await worker.upload(req.request_id, f, files[f as keyof typeof files])).status).toBe(200);
    await worker.answer(req.request_id, {
      files: names.map((n) => ({ name: n, size: files[n as keyof typeof files].byteLength })),
    });
    return ok(retrieve(user, future.request_id));
  }

  it('save_weights_for_sampler makes a checkpoint; save_weights a resumable state; both listed, downloadable, deletable', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const sampler = await save(user, worker, modelId, 'sampler', 1, 'final');
    expect(sampler).toEqual({
      type: 'save_weights_for_sampler',
      path: `tinker://${modelId}/sampler_weights/final`,
      sampling_session_id: null,
    });
    const state = await save(user, worker, modelId, 'state', 2, 'step-2');
    expect(state).toEqual({ type: 'save_weights', path: `tinker://${modelId}/weights/step-2` });
    // A second state of the same name needs overwrite.
    const clash = await tinker(user, 'POST', '/api/v1/save_weights', { model_id: modelId, seq_id: 3, path: 'step-2' });
    expect(clash.status).toBe(400);
    expect(clash.body.detail).toMatch(/overwrite/);

    const checkpoints = await ok(
      tinker(user, 'GET', `/v1/preview/models/${modelId}/checkpoints`, undefined, {
        authorization: `Bearer ${user.key}`,
      }),
    );
    expect(checkpoints.data.map((c: { step: number }) => c.step)).toEqual([0, 1]);

    const listed = await ok(tinker(user, 'GET', `/api/v1/training_runs/${modelId}/checkpoints`));
    const configSize = files['adapter_config.json'].byteLength;
    expect(
      listed.checkpoints.map((c: { checkpoint_id: string; size_bytes: number }) => [c.checkpoint_id, c.size_bytes]),
    ).toEqual([
      ['weights/step-2', configSize + 4 + 3],
      ['sampler_weights/final', configSize + 4],
    ]);
    const info = await ok(tinker(user, 'POST', '/api/v1/weights_info', { tinker_path: state.path }));
    expect(info).toEqual({
      base_model: HF_BASE,
      is_lora: true,
      lora_rank: 8,
      train_unembed: true,
      train_mlp: true,
      train_attn: true,
    });
    const run = await ok(tinker(user, 'GET', `/api/v1/training_runs/${modelId}`));
    expect(run).toMatchObject({ training_run_id: modelId, base_model: HF_BASE, lora_rank: 8 });
    expect(run.last_checkpoint.tinker_path).toBe(state.path);
    expect(run.last_sampler_checkpoint.tinker_path).toBe(sampler.path);

    // The archive: a redirect to a link that needs no key, a tar of the files at its top level.
    const archive = await tinker(
      user,
      'GET',
      `/api/v1/training_runs/${modelId}/checkpoints/weights/step-2/archive`,
      undefined,
      {
        host: 'tuneboard.test:3000',
      },
    );
    expect(archive.status).toBe(302);
    const location = archive.headers.get('location')!;
    expect(location).toMatch(/^http:\/\/tuneboard\.test:3000\/api\/v1\/archives\/[A-Za-z0-9_-]+$/);
    const tar = await tinker(null, 'GET', new URL(location).pathname);
    expect(tar.status).toBe(200);
    const names = [0, 1, 2].map((i) => {
      let offset = 0;
      for (let j = 0; j < i; j++) {
        const size = parseInt(Buffer.from(tar.raw.subarray(offset + 124, offset + 135)).toString(), 8);
        offset += 512 + Math.ceil(size / 512) * 512;
      }
      return Buffer.from(tar.raw.subarray(offset, offset + 100))
        .toString()
        .replace(/\0.*$/s, '');
    });
    expect(names).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'optimizer.safetensors']);

    // Deleting sampler weights deletes their checkpoint.
    const del = await tinker(user, 'DELETE', `/api/v1/training_runs/${modelId}/checkpoints/sampler_weights/final`);
    expect(del.status).toBe(204);
    const after = await ok(
      tinker(user, 'GET', `/v1/preview/models/${modelId}/checkpoints`, undefined, {
        authorization: `Bearer ${user.key}`,
      }),
    );
    expect(after.data.map((c: { step: number }) => c.step)).toEqual([0]);
  });

  it('unnamed sampler saves answer a sampling session and only the three latest are kept', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const sessions: string[] = [];
    for (let seq = 1; seq <= 4; seq++) {
      const r = await save(user, worker, modelId, 'sampler', seq);
      expect(r.path).toBe(`tinker://${modelId}/sampler_weights/ephemeral-${seq}`);
      sessions.push(r.sampling_session_id);
    }
    const listed = await ok(tinker(user, 'GET', `/api/v1/training_runs/${modelId}/checkpoints`));
    expect(listed.checkpoints.map((c: { checkpoint_id: string }) => c.checkpoint_id).sort()).toEqual([
      'sampler_weights/ephemeral-2',
      'sampler_weights/ephemeral-3',
      'sampler_weights/ephemeral-4',
    ]);
    expect(await ok(tinker(user, 'GET', `/api/v1/samplers/${sessions[3]}`))).toEqual({
      sampler_id: sessions[3],
      base_model: HF_BASE,
      model_path: `tinker://${modelId}/sampler_weights/ephemeral-4`,
    });
  });

  it('load_state_with_optimizer hands the worker the saved files; LoRA settings that differ are refused', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const state = await save(user, worker, modelId, 'state', 1, 'resume-me');
    const { modelId: second } = await trainingClient(user, worker);
    const load = await ok(
      tinker(user, 'POST', '/api/v1/load_weights', { model_id: second, seq_id: 1, path: state.path, optimizer: true }),
    );
    const [req] = (await worker.poll()).requests;
    expect(req).toMatchObject({
      request_id: load.request_id,
      kind: 'load_weights',
      payload: {
        optimizer: true,
        files: ['adapter_config.json', 'adapter_model.safetensors', 'optimizer.safetensors'],
      },
    });
    expect(req.payload.tuneboard).toBeUndefined();
    const got = await worker.download(req.request_id, 'optimizer.safetensors');
    expect(Array.from(got.raw)).toEqual([5, 6, 7]);
    await worker.answer(req.request_id, {});
    expect(await ok(retrieve(user, load.request_id))).toEqual({
      type: 'load_weights',
      path: state.path,
      model_id: second,
    });

    const { modelId: other } = await trainingClient(user, worker, { rank: 16 });
    const mismatch = await tinker(user, 'POST', '/api/v1/load_weights', {
      model_id: other,
      seq_id: 1,
      path: state.path,
      optimizer: false,
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.detail).toMatch(/rank: 8 there, 16 here/);
  });
});

describe('failures', () => {
  it('a worker that stops being seen fails its training clients, saying how to resume', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const pending = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1)));
    await sweepTinker(new Date(Date.now() + 10 * 60_000));
    const failed = await ok(retrieve(user, pending.request_id));
    expect(failed.category).toBe('server');
    expect(failed.error).toMatch(/stopped responding.*state in memory .* is lost/);
    const after = await tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 2));
    expect(after.status).toBe(400);
    expect(after.body.detail).toMatch(/failed/);
  });

  it('a worker restarted under the same id fails the training clients it no longer holds', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const pending = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1)));
    worker.held = [];
    expect((await worker.poll({ acceptNew: false })).requests).toEqual([]);
    const failed = await ok(retrieve(user, pending.request_id));
    expect(failed.error).toMatch(/restarted and no longer holds/);
  });

  it('a worker error fails its request only; a failed create_model fails the training client', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    const first = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1)));
    const [req] = (await worker.poll()).requests;
    await worker.fail(req.request_id, 'datum 0: token 200000 at position 5 is outside the vocabulary');
    expect(await ok(retrieve(user, first.request_id))).toEqual({
      error: 'datum 0: token 200000 at position 5 is outside the vocabulary',
      category: 'user',
    });
    const next = await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 2)));
    expect((await worker.poll()).requests.map((r) => r.request_id)).toEqual([next.request_id]);
  });

  it('a silent session ends and closes its training clients; the worker is told to free them', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    await sweepTinker(new Date(Date.now() + 11 * 60_000));
    // (The far-future sweep also ends the worker's clients as silent: either way the client is no longer live.)
    const { drop } = await worker.poll({ acceptNew: false });
    expect(drop).toEqual([modelId]);
    const clients = await ok(
      tinker(user, 'GET', `/v1/preview/models/${modelId}/tinker`, undefined, { authorization: `Bearer ${user.key}` }),
    );
    expect(['closed', 'failed']).toContain(clients.training_client.status);
  });
});

describe('the dashboard', () => {
  it('lists live training clients with their open requests, and a model’s requests and saves', async () => {
    const user = await createUser();
    const worker = new ScriptedWorker();
    const { modelId } = await trainingClient(user, worker);
    await ok(tinker(user, 'POST', '/api/v1/forward_backward', forwardBackwardBody(modelId, 1)));
    const bearer = { authorization: `Bearer ${user.key}` };
    const list = await ok(tinker(null, 'GET', '/v1/preview/tinker-training-clients?live=true', undefined, bearer));
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({
      model_id: modelId,
      status: 'ready',
      worker_id: worker.id,
      waiting_reason: null,
      queued_requests: 1,
      lora: { rank: 8, alpha: 32 },
      sdk_version: '0.25.0',
    });
    const model = await ok(tinker(null, 'GET', `/v1/preview/models/${modelId}/tinker`, undefined, bearer));
    expect(model.requests.map((r: { kind: string; status: string }) => [r.kind, r.status])).toEqual([
      ['forward_backward', 'queued'],
      ['create_model', 'done'],
    ]);
    const workers = await ok(tinker(null, 'GET', '/v1/preview/training-workers', undefined, bearer));
    const mine = workers.data.find((w: { id: string }) => w.id === worker.id);
    expect(list.data[0].model_name).toMatch(/^tiny-qwen3-/);
    expect(mine.training_clients).toEqual([
      { model_id: modelId, model_name: list.data[0].model_name, base_model: HF_BASE },
    ]);
    expect(mine.kinds).toEqual(['tinker']);
    // Another account sees that the worker holds a client, not which.
    const stranger = await createUser();
    const theirs = await ok(
      tinker(null, 'GET', '/v1/preview/training-workers', undefined, { authorization: `Bearer ${stranger.key}` }),
    );
    expect(theirs.data.find((w: { id: string }) => w.id === worker.id).training_clients).toEqual([
      { model_id: null, model_name: null, base_model: HF_BASE },
    ]);
  });

  it('says why a training client no worker has taken waits', async () => {
    const user = await createUser();
    // A worker that can train the base model is connected, but it is never asked for a new training client.
    await new ScriptedWorker().poll({ acceptNew: false });
    const session = await ok(
      tinker(user, 'POST', '/api/v1/create_session', { tags: [], user_metadata: null, sdk_version: '0.25.0' }),
    );
    const created = await ok(
      tinker(user, 'POST', '/api/v1/create_model', {
        session_id: session.session_id,
        model_seq_id: 0,
        base_model: HF_BASE,
        lora_config: { rank: 4 },
      }),
    );
    const list = await ok(
      tinker(null, 'GET', '/v1/preview/tinker-training-clients?live=true', undefined, {
        authorization: `Bearer ${user.key}`,
      }),
    );
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ model_id: created.model_id, status: 'waiting', worker_id: null });
    expect(list.data[0].waiting_reason).toMatch(/^waiting for one of \d+ capable worker\(s\) to have room/);
    // Deleting the model withdraws its create_model, which would otherwise wait for good in the database: on
    // PostgreSQL the files share one, and a later scripted worker taking new clients would be handed this one.
    const deleted = await tinker(null, 'DELETE', `/v1/preview/models/${created.model_id}`, undefined, {
      authorization: `Bearer ${user.key}`,
    });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    const after = await ok(
      tinker(null, 'GET', '/v1/preview/tinker-training-clients?live=true', undefined, {
        authorization: `Bearer ${user.key}`,
      }),
    );
    expect(after.data).toEqual([]);
  });
});

describe('sampling', () => {
  it('asample runs on the chat engine: sequences with logprobs, JSON or protobuf, seeded, counted in usage', async () => {
    const { flushUsage } = await import('@/lib/services/usage');
    const user = await createUser();
    const session = await ok(tinker(user, 'POST', '/api/v1/create_session', { tags: [], sdk_version: '0.25.0' }));
    const sampler = await ok(
      tinker(user, 'POST', '/api/v1/create_sampling_session', {
        session_id: session.session_id,
        sampling_session_seq_id: 0,
        base_model: 'tuneboard/tiny-random',
      }),
    );
    const body = {
      sampling_session_id: sampler.sampling_session_id,
      seq_id: 0,
      num_samples: 2,
      prompt: { chunks: [{ type: 'encoded_text', tokens: [10, 11, 12] }] },
      sampling_params: { max_tokens: 4, seed: 7, temperature: 1 },
      prompt_logprobs: true,
    };
    const future = await ok(tinker(user, 'POST', '/api/v1/asample', body));
    // The SDK's retry of the same (sampling session, seq_id) is the same future.
    expect((await ok(tinker(user, 'POST', '/api/v1/asample', body))).request_id).toBe(future.request_id);
    let answer = await ok(retrieve(user, future.request_id, 'application/json'));
    while (answer.type === 'try_again') answer = await ok(retrieve(user, future.request_id, 'application/json'));
    expect(answer.sequences).toHaveLength(2);
    for (const seq of answer.sequences) {
      expect(seq.tokens).toHaveLength(4);
      expect(seq.logprobs).toHaveLength(4);
      expect(seq.stop_reason).toBe('length');
      for (const lp of seq.logprobs) expect(lp).toBeLessThanOrEqual(0);
    }
    expect(answer.prompt_logprobs).toHaveLength(3);
    expect(answer.prompt_logprobs[0]).toBeNull();
    const proto = await retrieve(user, future.request_id, 'application/x-protobuf');
    expect(proto.headers.get('content-type')).toBe('application/x-protobuf');

    // Seeded: the same request under another seq_id gives the same tokens.
    const again = await ok(tinker(user, 'POST', '/api/v1/asample', { ...body, seq_id: 1 }));
    let second = await ok(retrieve(user, again.request_id, 'application/json'));
    while (second.type === 'try_again') second = await ok(retrieve(user, again.request_id, 'application/json'));
    expect(second.sequences.map((s: { tokens: number[] }) => s.tokens)).toEqual(
      answer.sequences.map((s: { tokens: number[] }) => s.tokens),
    );

    // A prompt the model cannot take is the submission's 400, not a failed future.
    const tooLong = await tinker(user, 'POST', '/api/v1/asample', {
      ...body,
      seq_id: 2,
      prompt: { chunks: [{ type: 'encoded_text', tokens: [99_999_999] }] },
    });
    expect(tooLong.status).toBe(400);

    await flushUsage();
    const usage = await ok(tinker(null, 'GET', '/v1/usage?days=1', undefined, { authorization: `Bearer ${user.key}` }));
    expect(JSON.stringify(usage)).toContain('tuneboard/tiny-random');
  });
});
