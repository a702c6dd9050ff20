// The compose stack's S3-compatible artifact store: s3rver (the S3 server Tuneboard's own tests run against) with
// its files under S3_DIRECTORY, the bucket S3_BUCKET created at start, and the one key pair S3_ACCESS_KEY_ID /
// S3_SECRET_ACCESS_KEY. s3rver alone is a test server: it accepts its fixed S3RVER key, serves unsigned requests
// to anyone, and never checks a Signature Version 4 signature (only the access key id). Here the fixed key is
// revoked and every request must carry an AWS4-HMAC-SHA256 Authorization header whose signature verify() below
// recomputes with the secret, within 15 minutes of its date; anything else is 403. So only holders of the .env
// secret get in. GET /_health (no bucket may be named so) answers 200 for the container's health check.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import S3rver from 's3rver';
import AWSAccount from 's3rver/lib/models/account.js';

const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (!value) {
    console.error(`${name} is required`);
    process.exit(2);
  }
  return value;
};
const bucket = env('S3_BUCKET');
const accessKeyId = env('S3_ACCESS_KEY_ID');
const secretAccessKey = env('S3_SECRET_ACCESS_KEY');
const directory = env('S3_DIRECTORY', '/data');
const port = Number(env('S3_PORT', '9000'));

AWSAccount.DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
AWSAccount.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);

const server = new S3rver({
  address: '0.0.0.0',
  port,
  directory,
  silent: process.env.S3_SILENT !== '0',
  configureBuckets: [{ name: bucket, configs: [] }],
  // Path-style only (Tuneboard's client): with virtual hosts on, s3rver takes a host name such as "s3" (the
  // compose service) for a bucket's CNAME and answers NoSuchBucket.
  vhostBuckets: false,
});
const rfc3986 = (text) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const hmac = (key, text) => createHmac('sha256', key).update(text).digest();
const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/** Why the request's SigV4 Authorization header is not valid for our key pair, or null when it is. */
function verify(req) {
  const auth = req.headers.authorization ?? '';
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return 'an AWS4-HMAC-SHA256 Authorization header is required';
  const [, keyId, day, region, signedHeaders, signature] = m;
  if (keyId !== accessKeyId) return 'unknown access key';
  const amzDate = req.headers['x-amz-date'] ?? '';
  const when = Date.parse(amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (!amzDate.startsWith(day) || !(Math.abs(Date.now() - when) < 15 * 60_000)) return 'x-amz-date missing or skewed';
  const names = signedHeaders.split(';');
  if (!names.includes('host')) return 'the host header must be signed';
  const [rawPath, rawQuery = ''] = req.url.split('?', 2);
  const path = rawPath
    .split('/')
    // As aws4fetch (Tuneboard's S3 client) signs an S3 path: "+" read as a space, then encoded once.
    .map((seg) => rfc3986(decodeURIComponent(seg.replace(/\+/g, ' '))))
    .join('/');
  const query = rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => pair.split('=', 2).map((x) => rfc3986(decodeURIComponent((x ?? '').replace(/\+/g, ' ')))))
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const headers = names
    .map(
      (n) =>
        `${n}:${String(req.headers[n] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const payload = req.headers['x-amz-content-sha256'] ?? 'UNSIGNED-PAYLOAD';
  const canonical = [req.method, path, query, headers, signedHeaders, payload].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let key = hmac(`AWS4${secretAccessKey}`, day);
  for (const part of [region, 's3', 'aws4_request']) key = hmac(key, part);
  const expected = hmac(key, toSign);
  return timingSafeEqual(expected, Buffer.from(signature, 'hex')) ? null : 'signature does not match';
}

// Koa composes its middleware when the server starts listening, so this runs ahead of s3rver's own.
server.middleware.unshift(async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/_health') {
    ctx.body = 'ok';
    return;
  }
  const refused = verify(ctx.req);
  if (refused) {
    ctx.status = 403;
    ctx.type = 'application/xml';
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>${refused}</Message></Error>`;
    return;
  }
  await next();
});

const { address, port: bound } = await server.run();
console.log(JSON.stringify({ msg: 's3 store listening', address, port: bound, bucket, directory }));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
