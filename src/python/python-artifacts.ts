import { MAX_RUN_NOTES } from '../sandbox/output/record-budget.ts';
import type { ChartData } from '../sandbox/chart-types.ts';
import type { SandboxFile, SandboxImage } from '../sandbox/types.ts';
import { encodeBase64 } from '../util/base64.ts';
import { safeLabel } from '../util/untrusted/safe-label.ts';

/**
 * An image or file a python run returned, as the tool streams it and stores it in the
 * conversation: inline as base64 (`data`), or as a link when the app stores artifacts itself
 * (`saveArtifact`).
 *
 * @example
 * ```tsx
 * {output.images.map(image => <img key={image.name} src={image.url ?? `data:${image.mediaType};base64,${image.data}`} />)}
 * ```
 */
export type PythonArtifact = {
  /** `figure-1.png` for images; `outputs/summary.csv` (relative to /tmp) for files. */
  name: string;
  /** `image/png` for images; guessed from the name for files (offer those as downloads only). */
  mediaType: string;
  /** Bytes. */
  size: number;
  /** Images only: pixels. */
  width?: number;
  /** Images only: pixels. */
  height?: number;
  /** The bytes as base64, unless `url` is set. */
  data?: string;
  /** Where the app stored the artifact (`saveArtifact`). */
  url?: string;
  /** A matplotlib figure's chart as data (type, title, axes, series): draw it, or read numbers. */
  chart?: ChartData;
};

/**
 * Stores an artifact where the app keeps files (object storage, a CDN) and returns its URL,
 * so conversations carry links instead of base64. The bytes and the name come from the
 * sandbox: store each under a random key per user (never the name the code chose), as
 * `application/octet-stream` with `Content-Disposition: attachment` (never the sandbox's media
 * type, never inline), on a host other than the app's. The URL also goes to the model for
 * images, so the provider must be able to fetch it: the random key is what keeps it private.
 *
 * @example
 * ```ts
 * // Per request: `userId` is the signed-in user, `env.ARTIFACTS` a Cloudflare R2 bucket.
 * const saveArtifact: SaveArtifact = async ({ data }) => {
 *   const key = `${userId}/${crypto.randomUUID()}`;
 *   await env.ARTIFACTS.put(key, data, {
 *     httpMetadata: { contentType: 'application/octet-stream', contentDisposition: 'attachment' },
 *   });
 *   return `https://artifacts.example.com/${key}`;
 * };
 * ```
 */
export type SaveArtifact = (artifact: {
  /** `image` or `file`. */
  kind: 'image' | 'file';
  /** As in {@link PythonArtifact}. */
  name: string;
  /** As in {@link PythonArtifact}. */
  mediaType: string;
  /** The bytes. */
  data: Uint8Array;
  /** The tool call that made it. */
  toolCallId: string;
}) => Promise<string>;

/**
 * A run's images, files and notes cut to the caps before anything is encoded, saved or shown
 * to the model: a sandbox that returns more (it should not) costs no more than one that
 * keeps to them. What was cut is said in a note. Names and notes lose control and invisible
 * formatting characters (`safeLabel`), whatever sandbox made them: a page shows them.
 */
export function withinCaps({
  images,
  files,
  notes,
  maxImages = 10,
  maxFiles = 20,
  maxNotes = MAX_RUN_NOTES,
}: {
  /** The run's images. */
  images: readonly SandboxImage[];
  /** The run's files. */
  files: readonly SandboxFile[];
  /** The run's notes. */
  notes: readonly string[];
  /** Images kept. */
  maxImages?: number | undefined;
  /** Files kept. */
  maxFiles?: number | undefined;
  /** Notes kept (besides the ones saying what was cut). */
  maxNotes?: number | undefined;
}): { images: SandboxImage[]; files: SandboxFile[]; notes: string[] } {
  const cut: string[] = [];
  const keep = <T>(items: readonly T[], max: number, what: string): T[] => {
    if (items.length <= max) return [...items];
    cut.push(`the sandbox returned ${items.length} ${what}; only the first ${max} were kept`);
    return items.slice(0, max);
  };
  return {
    images: keep(images, maxImages, 'images').map(image => ({
      ...image,
      name: safeLabel(image.name),
    })),
    files: keep(files, maxFiles, 'files').map(file => ({ ...file, path: safeLabel(file.path) })),
    notes: [...keep(notes, maxNotes, 'notes').map(safeLabel), ...cut],
  };
}

/**
 * Converts a run's images and files for the tool output (inline or saved), after cutting them
 * and the notes to the caps (see `withinCaps`).
 */
export async function toPythonArtifacts({
  toolCallId,
  saveArtifact,
  ...run
}: Parameters<typeof withinCaps>[0] & {
  /** The tool call that made them. */
  toolCallId: string;
  /** Where the app stores them; inline base64 without it. */
  saveArtifact: SaveArtifact | undefined;
}): Promise<{ images: PythonArtifact[]; files: PythonArtifact[]; notes: string[] }> {
  const { images, files, notes } = withinCaps(run);
  const convert = async (
    kind: 'image' | 'file',
    name: string,
    mediaType: string,
    data: Uint8Array,
    extra: { width?: number; height?: number; chart?: ChartData },
  ): Promise<PythonArtifact> => {
    const base = { name, mediaType, size: data.byteLength, ...extra };
    if (saveArtifact === undefined) return { ...base, data: encodeBase64(data) };
    return { ...base, url: await saveArtifact({ kind, name, mediaType, data, toolCallId }) };
  };
  return {
    images: await Promise.all(
      images.map(({ name, mediaType, data, width, height, chart }) =>
        convert('image', name, mediaType, data, { width, height, ...(chart ? { chart } : {}) }),
      ),
    ),
    files: await Promise.all(
      files.map(({ path, mediaType, data }) => convert('file', path, mediaType, data, {})),
    ),
    notes,
  };
}

/** One line for the model naming what went to the user, e.g. `figure-1.png (640x480 PNG)`. */
export function describeArtifacts({
  images,
  files,
  notes,
}: {
  images: readonly PythonArtifact[];
  files: readonly PythonArtifact[];
  notes: readonly string[];
}): string {
  const shown = [
    ...images.map(image => `${image.name} (${image.width}x${image.height} PNG)`),
    ...files.map(file => `${file.name} (${formatBytes(file.size)})`),
  ];
  const lines = [];
  if (shown.length > 0) lines.push(`[Returned to the user: ${shown.join(', ')}]`);
  for (const note of notes) lines.push(`[Note: ${note}]`);
  return lines.join('\n');
}

/** `1.2 KB`, for text the model or the user reads. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The attempt event for `onAttempt` without the bulky bytes (the tool output keeps them). */
export function withoutBytes(artifacts: readonly PythonArtifact[]): PythonArtifact[] {
  return artifacts.map(({ data: _data, ...rest }) => rest);
}
