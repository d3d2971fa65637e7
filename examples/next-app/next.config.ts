import type { NextConfig } from 'next';
import { COMMON_HEADERS, OTHER_ROUTES_POLICY } from './lib/security-headers';

const config: NextConfig = {
  // Says nothing a visitor needs; tells a scanner which server to try.
  poweredByHeader: false,
  // The page ('/') gets its Content-Security-Policy, with a fresh nonce, from proxy.ts; every
  // other path ('/:path+') a fixed one. Two policies on one response would both apply.
  async headers() {
    return [
      { source: '/:path*', headers: COMMON_HEADERS },
      {
        source: '/:path+',
        headers: [{ key: 'Content-Security-Policy', value: OTHER_ROUTES_POLICY }],
      },
    ];
  },
  // Loaded from node_modules at run time, not bundled: MCP stdio servers are child
  // processes and the sandbox talks to Docker, both through Node APIs a bundle would break.
  // unstorage and ioredis: the Redis embedding store, loaded only with REDIS_URL.
  serverExternalPackages: [
    'ai-toolbelt',
    '@modelcontextprotocol/sdk',
    'dockerode',
    'unstorage',
    'ioredis',
    // The local embedding model (lib/embedder.ts): ONNX Runtime's native binaries and the
    // tokenizer load in ai-toolbelt's worker thread, from node_modules, never from a bundle.
    'onnxruntime-node',
    '@huggingface/tokenizers',
    // OpenTelemetry (lib/telemetry.ts, with OTEL_EXPORTER_OTLP_ENDPOINT): exporters use Node's http.
    '@ai-sdk/otel',
    '@opentelemetry/context-async-hooks',
    '@opentelemetry/core',
    '@opentelemetry/exporter-metrics-otlp-http',
    '@opentelemetry/exporter-trace-otlp-http',
    '@opentelemetry/resources',
    '@opentelemetry/sdk-metrics',
    '@opentelemetry/sdk-trace',
  ],
};

export default config;
