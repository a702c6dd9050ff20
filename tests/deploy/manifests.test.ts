import fs from 'node:fs';
import path from 'node:path';
import { Namespace, ConfigMap, Secret, Service, PersistentVolumeClaim } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

/**
 * The deployment files (docs/deploy.md): every Kubernetes manifest under deploy/k8s validates against the
 * Kubernetes API's JSON schemas (kubernetes-models ships them, so this runs offline), and the settings the issue
 * asks for hold: two server replicas behind a Service, liveness on /livez (its own port) and readiness on /v1/system-check,
 * a worker Deployment that scales, PostgreSQL and S3 as settings from outside. The compose stack publishes only
 * Tuneboard's port, and every secret it uses comes from the .env file the example documents.
 */
const ROOT = path.join(import.meta.dirname, '..', '..');
const K8S = path.join(ROOT, 'deploy', 'k8s');

type Manifest = Record<string, any>;
const MODELS: Record<string, { new (data: Manifest): { validate(): void } }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

function validate(doc: Manifest): void {
  const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
  if (!Model) throw new Error(`no schema here for ${doc.apiVersion} ${doc.kind}: add it to MODELS`);
  new Model(doc).validate();
}

function yamlFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? yamlFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .filter((f) => f.endsWith('.yaml'));
}

function load(file: string): Manifest[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d) => {
    if (d.errors.length) throw new Error(`${path.relative(ROOT, file)}: ${d.errors[0].message}`);
    return d.toJS() as Manifest;
  });
}

const files = yamlFiles(K8S);
// Patches (a kustomization's `patches`, named *-patch.yaml) are partial objects; the gpu test reads the one there is.
const isResource = (f: string) => path.basename(f) !== 'kustomization.yaml' && !f.endsWith('-patch.yaml');
const manifests = files
  .filter(isResource)
  .flatMap((f) => load(f).map((doc) => ({ file: path.relative(ROOT, f), doc })));
const find = (kind: string, name: string) => {
  const m = manifests.find((x) => x.doc.kind === kind && x.doc.metadata.name === name);
  if (!m) throw new Error(`${kind} ${name} is missing from deploy/k8s`);
  return m.doc;
};

describe('Kubernetes manifests', () => {
  it('every manifest validates against the Kubernetes schemas', () => {
    expect(manifests.length).toBeGreaterThan(8);
    for (const { file, doc } of manifests) {
      expect(() => validate(doc), `${file}: ${doc.kind} ${doc.metadata?.name}`).not.toThrow();
    }
  });

  it('the validator refuses a broken manifest (it is not a no-op)', () => {
    const broken = structuredClone(find('Deployment', 'tuneboard'));
    broken.spec.replicas = 'two';
    expect(() => validate(broken)).toThrow(/replicas/);
    const noImage = structuredClone(find('Deployment', 'tuneboard'));
    delete noImage.spec.template.spec.containers[0].name;
    expect(() => validate(noImage)).toThrow(/name/);
  });

  it('each kustomization lists files that exist, and together they cover every manifest', () => {
    const listed = new Set<string>();
    for (const file of files.filter((f) => path.basename(f) === 'kustomization.yaml')) {
      const k = parse(fs.readFileSync(file, 'utf8'));
      for (const r of [...(k.resources ?? []), ...(k.patches ?? []).map((p: { path: string }) => p.path)]) {
        const target = path.resolve(path.dirname(file), r);
        expect(fs.existsSync(target), `${path.relative(ROOT, file)} lists ${r}`).toBe(true);
        listed.add(target);
      }
    }
    const unlisted = files
      .filter((f) => path.basename(f) !== 'kustomization.yaml' && !listed.has(f))
      .map((f) => path.relative(K8S, f));
    // The Secret is created by hand (secret.example.yaml says how); everything else is applied.
    expect(unlisted).toEqual(['secret.example.yaml']);
  });

  it('the server: two replicas behind a Service, liveness on its own port, readiness on /v1/system-check', () => {
    const server = find('Deployment', 'tuneboard');
    expect(server.spec.replicas).toBe(2);
    const pod = server.spec.template.spec;
    const [container] = pod.containers;
    expect(container.ports).toEqual([
      { name: 'http', containerPort: 3000 },
      { name: 'liveness', containerPort: 3001 },
    ]);
    // Liveness from the thread that answers /livez (lib/runtime/liveness.ts), on the port the server is told.
    expect(container.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'liveness' });
    expect(container.env).toContainEqual({ name: 'TUNEBOARD_HEALTH_PORT', value: '3001' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/v1/health', port: 'http' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/v1/system-check', port: 'http' });
    // The routes the probes name exist.
    for (const route of ['health', 'system-check']) {
      expect(fs.existsSync(path.join(ROOT, 'app', 'v1', route, 'route.ts')), route).toBe(true);
    }
    // The system check waits up to 5 s per check (lib/services/health.ts): the probe must wait longer.
    expect(container.readinessProbe.timeoutSeconds).toBeGreaterThan(10);
    // The server drains for 25 s on SIGTERM (lib/runtime/server-start.ts).
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(25);
    expect(pod.securityContext.runAsNonRoot).toBe(true);

    const service = find('Service', 'tuneboard');
    const labels = server.spec.template.metadata.labels;
    for (const [k, v] of Object.entries(service.spec.selector)) expect(labels[k], k).toBe(v);
    expect(service.spec.ports[0].targetPort).toBe('http');
  });

  it('PostgreSQL and S3 are settings from outside; the servers start no training process', () => {
    const config = find('ConfigMap', 'tuneboard-config').data;
    const secret = parse(fs.readFileSync(path.join(K8S, 'secret.example.yaml'), 'utf8'));
    expect(Object.keys(secret.stringData).sort()).toEqual(
      ['DATABASE_URL', 'TUNEBOARD_S3_ACCESS_KEY_ID', 'TUNEBOARD_S3_SECRET_ACCESS_KEY', 'TUNEBOARD_WORKER_TOKEN'].sort(),
    );
    expect(config.TUNEBOARD_S3_ENDPOINT).toMatch(/^https?:\/\//);
    expect(config.TUNEBOARD_S3_BUCKET).toBeTruthy();
    expect(config.TUNEBOARD_RUNNER_CONCURRENCY).toBe('0');
    const [container] = find('Deployment', 'tuneboard').spec.template.spec.containers;
    expect(container.envFrom).toEqual([
      { configMapRef: { name: 'tuneboard-config' } },
      { secretRef: { name: 'tuneboard-secrets' } },
    ]);
  });

  it('the workers: a Deployment of the Node.js worker that an autoscaler scales, with the server token', () => {
    const worker = find('Deployment', 'tuneboard-worker');
    const [container] = worker.spec.template.spec.containers;
    expect(container.image).toBe('tuneboard/server');
    expect(container.command).toEqual(['node', '.tuneboard/worker.mjs']);
    const env = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e]));
    expect(env.TUNEBOARD_WORKER_TOKEN.valueFrom.secretKeyRef).toEqual({
      name: 'tuneboard-secrets',
      key: 'TUNEBOARD_WORKER_TOKEN',
    });
    expect(env.TUNEBOARD_SERVER_URL.valueFrom.configMapKeyRef.name).toBe('tuneboard-config');
    const hpa = find('HorizontalPodAutoscaler', 'tuneboard-worker');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'tuneboard-worker' });
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
  });

  it('the gpu overlay: vLLM with runtime LoRA loading, reading the adapter folder the servers write', () => {
    const vllm = find('Deployment', 'vllm');
    const [container] = vllm.spec.template.spec.containers;
    expect(container.args).toContain('--enable-lora');
    const env = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e.value]));
    expect(env.VLLM_ALLOW_RUNTIME_LORA_UPDATING).toBe('True');
    const patch = load(path.join(K8S, 'gpu', 'server-patch.yaml'))[0];
    const server = patch.spec.template.spec;
    const serverEnv = Object.fromEntries(server.containers[0].env.map((e: Manifest) => [e.name, e.value]));
    const adapterMount = server.containers[0].volumeMounts.find((m: Manifest) => m.name === 'adapters');
    expect(serverEnv.TUNEBOARD_VLLM_ADAPTER_DIR).toBe(adapterMount.mountPath);
    const vllmMount = container.volumeMounts.find((m: Manifest) => m.name === 'adapters');
    // The same path on both sides, so TUNEBOARD_VLLM_ADAPTER_DIR_ON_SERVER is not needed.
    expect(vllmMount.mountPath).toBe(adapterMount.mountPath);
    const claim = (spec: Manifest) =>
      spec.volumes.find((v: Manifest) => v.name === 'adapters').persistentVolumeClaim.claimName;
    expect(claim(vllm.spec.template.spec)).toBe(claim(server));
    expect(find('PersistentVolumeClaim', claim(server)).spec.accessModes).toEqual(['ReadWriteMany']);
    const maxLoras = container.args.find((a: string) => a.startsWith('--max-loras=')).split('=')[1];
    expect(serverEnv.TUNEBOARD_VLLM_MAX_LORAS).toBe(maxLoras);
  });
});

describe('compose stack', () => {
  const compose = parse(fs.readFileSync(path.join(ROOT, 'deploy', 'compose.yaml'), 'utf8'));
  const example = fs.readFileSync(path.join(ROOT, 'deploy', '.env.example'), 'utf8');

  it('publishes only Tuneboard, on 127.0.0.1 unless .env says otherwise', () => {
    const published = Object.entries(compose.services)
      .filter(([, s]) => (s as Manifest).ports)
      .map(([name, s]) => [name, (s as Manifest).ports]);
    expect(published).toEqual([['tuneboard', ['${TUNEBOARD_BIND:-127.0.0.1}:${TUNEBOARD_PORT:-3000}:3000']]]);
    for (const overlay of ['compose.gpu.yaml', 'compose.hf.yaml']) {
      const services = parse(fs.readFileSync(path.join(ROOT, 'deploy', overlay), 'utf8')).services;
      for (const [name, s] of Object.entries(services))
        expect((s as Manifest).ports, `${overlay} ${name}`).toBeUndefined();
    }
  });

  it('every variable the compose files use without a default is in .env.example', () => {
    const text = ['compose.yaml', 'compose.gpu.yaml', 'compose.hf.yaml']
      .map((f) => fs.readFileSync(path.join(ROOT, 'deploy', f), 'utf8'))
      .join('\n');
    const required = new Set([...text.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => m[1]));
    expect(required.size).toBeGreaterThan(3);
    for (const name of required) expect(example, name).toMatch(new RegExp(`^#?${name}=`, 'm'));
    // The secrets are placeholders that deploy/up.sh replaces, never working values.
    for (const name of ['POSTGRES_PASSWORD', 'S3_SECRET_ACCESS_KEY', 'TUNEBOARD_WORKER_TOKEN', 'VLLM_API_KEY']) {
      expect(example).toMatch(new RegExp(`^${name}=change-me$`, 'm'));
    }
  });

  it('the server gets the database and S3 from the stack, and the one CPU worker trains the built-in models', () => {
    const tb = compose.services.tuneboard.environment;
    expect(tb.DATABASE_URL).toMatch(/^postgres:\/\/tuneboard:\$\{POSTGRES_PASSWORD\}@postgres:5432\/tuneboard$/);
    expect(tb.TUNEBOARD_S3_ENDPOINT).toBe('http://s3:9000');
    expect(tb.TUNEBOARD_RUNNER_CONCURRENCY).toBe('0');
    expect(compose.services.worker.command).toEqual(['node', '.tuneboard/worker.mjs']);
    expect(compose.services.worker.image).toBe(compose.services.tuneboard.image);
  });
});
