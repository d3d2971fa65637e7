/**
 * The sandbox image `scripts/setup-sandbox.sh` builds: Debian bookworm's Python 3.11 with numpy,
 * pandas, matplotlib, scipy, Pillow and sympy, and pip (for `pip install` through the egress
 * proxy). The tag is `<python>-<image revision>`; the revision changes whenever the package list
 * does, so an app can pin it.
 *
 * @example
 * ```ts
 * const sandbox = await DockerSandbox.create({ image: DEFAULT_SANDBOX_IMAGE });
 * ```
 */
export const DEFAULT_SANDBOX_IMAGE = 'ai-toolbelt/python:3.11-2';

/**
 * Modules a warm container imports while it waits for code, so the code's own `import pandas`
 * is free (it costs ~2 s under gVisor in a fresh interpreter).
 *
 * @example
 * ```ts
 * const sandbox = await DockerSandbox.create({ preimport: [...DEFAULT_PREIMPORT, 'scipy.stats'] });
 * ```
 */
export const DEFAULT_PREIMPORT: readonly string[] = ['numpy', 'pandas', 'matplotlib.pyplot'];
