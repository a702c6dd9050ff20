import fs from 'node:fs';

// Shared with the health probe's fast path (lib/api/fast-path.ts), which answers before Next applies these.
const securityHeaders = JSON.parse(fs.readFileSync(new URL('./config/security-headers.json', import.meta.url), 'utf8'));

/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite ships its own WASM and data files; bundling it breaks their resolution. node-llama-cpp (the llama.cpp
  // engine, loaded by the inference threads on first use) imports each platform's prebuilt binary package by name,
  // and only this machine's is installed: bundled, the build fails to resolve the others.
  serverExternalPackages: ['@electric-sql/pglite', 'node-llama-cpp'],
  // Real clients call both /v1/chat/completions and /v1/chat/completions/ and never follow a 308
  // on POST (docs/contract.md §1.2): every API path must reach its handler directly.
  skipTrailingSlashRedirect: true,
  poweredByHeader: false,
  // Lets a benchmark or a second checkout build beside a running dev server without clobbering it.
  distDir: process.env.NEXT_DIST_DIR || '.next',
  reactStrictMode: true,
  // The container image (Dockerfile) runs Next's standalone server: its build sets TUNEBOARD_STANDALONE=1. Off
  // otherwise, because `next start` (the quick start) warns that it does not serve a standalone build.
  ...(process.env.TUNEBOARD_STANDALONE === '1' ? { output: 'standalone' } : {}),
  // A build checks types (`npm test` has no other step that does). CI checks them in a step of its own before it
  // builds and sets TUNEBOARD_SKIP_BUILD_TYPECHECK=1, which saves the build about 20 s.
  typescript: { ignoreBuildErrors: process.env.TUNEBOARD_SKIP_BUILD_TYPECHECK === '1' },
  // No page may be framed by another site (clickjacking), no response sniffed into another type, and no
  // full URL (which can carry ids) leaks to other origins in Referer.
  async headers() {
    return [
      {
        source: '/:path*',
        headers: Object.entries(securityHeaders).map(([key, value]) => ({ key, value })),
      },
    ];
  },
};

export default nextConfig;
