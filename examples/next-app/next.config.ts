import type { NextConfig } from 'next';

const config: NextConfig = {
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
