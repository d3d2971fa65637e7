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
  ],
};

export default config;
