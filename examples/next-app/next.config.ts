import type { NextConfig } from 'next';

const config: NextConfig = {
  // Loaded from node_modules at run time, not bundled: MCP stdio servers are child
  // processes and the sandbox talks to Docker, both through Node APIs a bundle would break.
  serverExternalPackages: ['ai-toolbelt', '@modelcontextprotocol/sdk', 'dockerode'],
};

export default config;
