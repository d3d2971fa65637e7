// ai-toolbelt/sandbox: gVisor execution on Docker engines or a Kubernetes cluster. This subpath
// loads dockerode (and, for a Kubernetes engine only, @kubernetes/client-node); the root entry does
// not. Its errors are also exported here (the same classes as the root entry's).
export type * from './types.ts';
export type * from './chart-types.ts';
export { DEFAULT_PREIMPORT, DEFAULT_SANDBOX_IMAGE } from './options/default-image.ts';
export { DockerSandbox } from './docker-sandbox.ts';
export type { DockerSandboxOptions } from './options/docker-sandbox-options.ts';
export type { ConversationOptions } from './options/conversation-options.ts';
export type { EgressOptions } from './egress/egress-options.ts';
export type { EgressRule } from './egress/egress-rules.ts';
export type { FleetOptions } from './options/fleet-options.ts';
export type { SandboxEngine, SandboxEngineOptions } from './options/engine-address.ts';
export type { KubernetesEngineOptions } from './options/kubernetes-options.ts';
export type { SandboxEngineStatus } from './engines/engine-types.ts';
export { DockerSandboxSession } from './session/docker-sandbox-session.ts';
export type { SessionOptions, SessionRunResult } from './session/session-options.ts';
export type { SandboxUnavailableReason } from '../errors/sandbox-unavailable-error.ts';
export { CodeTooLargeError } from '../errors/code-too-large-error.ts';
export { DockerTimeoutError } from '../errors/docker-timeout-error.ts';
export { SandboxBusyError } from '../errors/sandbox-busy-error.ts';
export { SandboxFileError } from '../errors/sandbox-file-error.ts';
export { SandboxInsecureEngineError } from '../errors/sandbox-insecure-engine-error.ts';
export { SandboxCleanupError } from '../errors/sandbox-cleanup-error.ts';
export { SandboxClosedError } from '../errors/sandbox-closed-error.ts';
export { SandboxRuntimeMissingError } from '../errors/sandbox-runtime-missing-error.ts';
export { SandboxUnavailableError } from '../errors/sandbox-unavailable-error.ts';
