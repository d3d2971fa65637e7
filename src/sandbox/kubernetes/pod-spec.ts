import { randomBytes } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import type { BoxSpec } from '../driver/engine-driver.ts';
import { containerLabels } from '../driver/labels.ts';
import type { ResolvedKubernetesOptions } from '../options/kubernetes-options.ts';

/** The container's name in every sandbox pod. */
export const CONTAINER = 'sandbox';
/** The user and group code runs as, as on Docker: `nobody`. */
const NOBODY = 65534;

/** A fresh pod name for a box of `kind` (the name is known before the create, for clean-up). */
export function podName(kind: BoxSpec['kind']): string {
  return `ai-toolbelt-${kind}-${randomBytes(6).toString('hex')}`;
}

/**
 * A label value Kubernetes accepts (at most 63 characters of letters, digits, `-`, `_`, `.`,
 * starting and ending with a letter or digit): host names may not be one.
 */
function labelValue(value: string): string {
  const cleaned = value
    .replace(/[^\w.-]/g, '-')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return cleaned || 'x';
}

/**
 * The hardened pod for a box: RuntimeClass gVisor, uid:gid 65534 (non-root), read-only root, no
 * privilege escalation, every capability dropped, RuntimeDefault seccomp, CPU and memory limits,
 * /tmp a memory `emptyDir` with a size limit, no service-account token, no service links, DNS
 * pointing nowhere, `activeDeadlineSeconds` as the server-side end of life (it holds when every
 * replica is gone), never restarted, and the sandbox's labels for sweeps. Its one container runs
 * the same command as on Docker, stdin open for attaches.
 *
 * @example
 * ```ts
 * const pod = podManifest({ name: podName('execute'), spec, options });
 * ```
 */
export function podManifest({
  name,
  spec,
  options,
}: {
  /** The pod's name. */
  name: string;
  /** What to run and its limits. */
  spec: BoxSpec;
  /** The engine's Kubernetes options. */
  options: ResolvedKubernetesOptions;
}): V1Pod {
  const { limits, cmd, ttlMs, kind, stdinOnce } = spec;
  const labels = Object.fromEntries(
    Object.entries({ ...containerLabels({ ttlMs, kind }), ...limits.labels }).map(
      ([key, value]) => [key, labelValue(value)],
    ),
  );
  const memory = String(limits.memoryBytes);
  const cpu = `${Math.round(limits.cpus * 1000)}m`;
  const cpuRequest = `${Math.max(1, Math.round(Math.min(options.cpuRequest, limits.cpus) * 1000))}m`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: options.namespace, labels },
    spec: {
      runtimeClassName: limits.runtime,
      restartPolicy: 'Never',
      activeDeadlineSeconds: Math.max(1, Math.ceil(ttlMs / 1000)),
      terminationGracePeriodSeconds: 1,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      // No network anyway; this keeps the cluster's DNS address out of the pod too.
      dnsPolicy: 'None',
      dnsConfig: { nameservers: ['127.0.0.1'] },
      ...(options.nodeSelector === undefined ? {} : { nodeSelector: options.nodeSelector }),
      securityContext: {
        runAsUser: NOBODY,
        runAsGroup: NOBODY,
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: CONTAINER,
          image: limits.image,
          imagePullPolicy: options.imagePullPolicy,
          command: cmd,
          workingDir: '/tmp',
          stdin: true,
          stdinOnce,
          tty: false,
          env: [
            { name: 'PATH', value: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
            { name: 'HOME', value: '/tmp' },
            { name: 'LANG', value: 'C.UTF-8' },
            { name: 'MPLCONFIGDIR', value: '/tmp/.config/matplotlib' },
          ],
          securityContext: {
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            privileged: false,
            runAsNonRoot: true,
            capabilities: { drop: ['ALL'] },
          },
          resources: {
            limits: { cpu, memory },
            requests: { cpu: cpuRequest, memory },
          },
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
        },
      ],
      volumes: [{ name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: `${limits.tmpfsMiB}Mi` } }],
    },
  };
}
