// The compose stack's S3-compatible artifact store: s3rver (the S3 server Tuneboard's own tests run against) with
// its files under S3_DIRECTORY, the bucket S3_BUCKET created at start, and the one key pair S3_ACCESS_KEY_ID /
// S3_SECRET_ACCESS_KEY. s3rver alone accepts its fixed S3RVER key and also serves unsigned requests to anyone;
// here the fixed key is revoked and an unsigned request is refused, so only holders of the .env secret get in.
// GET /_health (no bucket may be named so) answers 200 for the container's health check.
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
// Koa composes its middleware when the server starts listening, so this runs ahead of s3rver's own.
server.middleware.unshift(async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/_health') {
    ctx.body = 'ok';
    return;
  }
  const signed =
    'authorization' in ctx.headers ||
    'Signature' in ctx.query ||
    'X-Amz-Algorithm' in ctx.query ||
    'x-amz-algorithm' in ctx.query;
  if (!signed) {
    ctx.status = 403;
    ctx.type = 'application/xml';
    ctx.body =
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Unsigned requests are refused</Message></Error>';
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
