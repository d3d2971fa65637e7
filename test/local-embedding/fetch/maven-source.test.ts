// fetchModel with jars from a Maven repository (a real HTTP server on loopback standing in for
// Maven Central) and with a zip split into parts across packages, joined before its files are
// taken out.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fetchModel } from '../../../src/local-embedding/fetch/fetch-model.ts';
import type { LocalModelSpec, ModelSource } from '../../../src/local-embedding/local-models.ts';
import { MANIFEST_FILE } from '../../../src/local-embedding/models-dir.ts';
import { rejection, zipOf } from '../../helpers/model-packages.ts';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

const graph = randomBytes(300_000);
const tokenizer = Buffer.from('{"model":{"type":"WordPiece"}}');
const JAR_PATH = '/maven2/org/example/tiny/tiny-weights/1.0.0-beta1/tiny-weights-1.0.0-beta1.jar';
const settings = {
  description: 'a test model',
  licence: 'MIT',
  dimensions: 4,
  maxTokens: 8,
  pooling: 'cls',
  normalize: true,
  output: 'last_hidden_state',
  tokenTypeIds: true,
} as const;

let jar: Buffer;
let jarSpec: LocalModelSpec;
// A zip (weights and tokenizer) cut in two: part one in a jar, part two in another jar.
let inner: Buffer;
let partJars: Buffer[];
let splitSpec: LocalModelSpec;

/** What the fake repository does; reset before each test. */
let repo: { requests: string[]; authorizations: (string | undefined)[]; tampered?: boolean };
let server: Server;
let mavenUrl: string;

const source = (artifact: string, bytes: Buffer): ModelSource => ({
  kind: 'maven',
  name: `org.example.tiny:${artifact}`,
  version: '1.0.0-beta1',
  file: `${artifact}-1.0.0-beta1.jar`,
  sha256: sha256(bytes),
  bytes: bytes.length,
  licence: 'Apache-2.0',
});

beforeAll(async () => {
  jar = await zipOf({
    'META-INF/MANIFEST.MF': Buffer.from('Manifest-Version: 1.0\n'),
    'tiny-q.onnx': graph,
    'tiny-q-tokenizer.json': tokenizer,
  });
  jarSpec = {
    ...settings,
    name: 'tiny-maven',
    queryPrefix: 'query: ',
    documentPrefix: 'passage: ',
    packages: [source('tiny-weights', jar)],
    files: [
      {
        path: 'model.onnx',
        sha256: sha256(graph),
        bytes: graph.length,
        package: 'org.example.tiny:tiny-weights',
        member: 'tiny-q.onnx',
      },
      {
        path: 'tokenizer.json',
        sha256: sha256(tokenizer),
        bytes: tokenizer.length,
        package: 'org.example.tiny:tiny-weights',
        member: 'tiny-q-tokenizer.json',
      },
    ],
  };
  inner = await zipOf({ 'm/model.onnx': graph, 'm/tokenizer.json': tokenizer });
  const cut = Math.floor(inner.length / 2);
  const parts = [inner.subarray(0, cut), inner.subarray(cut)];
  partJars = await Promise.all(parts.map((part, i) => zipOf({ [`input/m.zip.00${i + 1}`]: part })));
  splitSpec = {
    ...settings,
    name: 'tiny-split',
    packages: partJars.map((bytes, i) => source(`tiny-part-${i + 1}`, bytes)),
    archives: [
      {
        name: 'm.zip',
        sha256: sha256(inner),
        bytes: inner.length,
        parts: parts.map((part, i) => ({
          package: `org.example.tiny:tiny-part-${i + 1}`,
          member: `input/m.zip.00${i + 1}`,
          sha256: sha256(part),
          bytes: part.length,
        })),
      },
    ],
    files: [
      {
        path: 'model.onnx',
        sha256: sha256(graph),
        bytes: graph.length,
        package: 'm.zip',
        member: 'm/model.onnx',
      },
      {
        path: 'tokenizer.json',
        sha256: sha256(tokenizer),
        bytes: tokenizer.length,
        package: 'm.zip',
        member: 'm/tokenizer.json',
      },
    ],
  };
  const files = new Map<string, Buffer>([
    [JAR_PATH, jar],
    ...partJars.map(
      (bytes, i) =>
        [
          `/maven2/org/example/tiny/tiny-part-${i + 1}/1.0.0-beta1/tiny-part-${i + 1}-1.0.0-beta1.jar`,
          bytes,
        ] as const,
    ),
  ]);
  server = createServer((request, response) => {
    repo.requests.push(request.url!);
    repo.authorizations.push(request.headers.authorization);
    const file = files.get(request.url!);
    if (file === undefined) {
      response.statusCode = 404;
      response.end('not found');
      return;
    }
    const bytes = Buffer.from(file);
    if (repo.tampered) bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0xff;
    response.end(bytes);
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  mavenUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/maven2`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise(resolve => server.close(resolve));
});

beforeEach(() => {
  repo = { requests: [], authorizations: [] };
});

const tempModelsDir = () => mkdtemp(join(tmpdir(), 'aitb-maven-'));
// The PyPI index is a closed port: a Maven model must never ask it.
const fetchFrom = (spec: LocalModelSpec, modelsDir: string, options = {}) =>
  fetchModel({
    model: spec.name,
    models: [spec],
    modelsDir,
    mavenUrl,
    indexUrl: 'http://127.0.0.1:9/simple',
    ...options,
  });

describe('fetchModel from a Maven repository', () => {
  it('takes the jar from its fixed path and the files out of it, prefixes in the manifest', async () => {
    const dir = await tempModelsDir();
    const fetched = await fetchFrom(jarSpec, dir);
    expect(fetched).toEqual({ path: join(dir, 'tiny-maven'), downloaded: true, bytes: jar.length });
    // One request, the jar's: no look-up, and no .sha256 or .sha1 beside it is asked for.
    expect(repo.requests).toEqual([JAR_PATH]);
    expect(await readFile(join(fetched.path, 'model.onnx'))).toEqual(graph);
    expect(await readFile(join(fetched.path, 'tokenizer.json'))).toEqual(tokenizer);
    const manifest = JSON.parse(await readFile(join(fetched.path, MANIFEST_FILE), 'utf8'));
    expect(manifest).toMatchObject({ queryPrefix: 'query: ', documentPrefix: 'passage: ' });
    expect((await fetchFrom(jarSpec, dir)).downloaded).toBe(false);
  });

  it('refuses a jar whose bytes differ from the pinned hash, leaving nothing behind', async () => {
    const dir = await tempModelsDir();
    repo.tampered = true;
    const error = await rejection(fetchFrom(jarSpec, dir));
    expect(error.reason).toBe('corrupt');
    expect(error.message).toContain('tiny-weights-1.0.0-beta1.jar');
    expect(error.message).toContain(jarSpec.packages[0]!.sha256);
    expect(error.message).toMatch(/SHA-256 [0-9a-f]{64}, not/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('is fetch-failed, naming the URL and the status, when the repository lacks the version', async () => {
    const dir = await tempModelsDir();
    const other = { ...jarSpec, packages: [{ ...jarSpec.packages[0]!, version: '9.9.9' }] };
    const error = await rejection(fetchFrom(other, dir));
    expect(error.reason).toBe('fetch-failed');
    expect(error.message).toContain(
      `${mavenUrl}/org/example/tiny/tiny-weights/9.9.9/tiny-weights-1.0.0-beta1.jar`,
    );
    expect(error.message).toContain('404');
    expect(await readdir(dir)).toEqual([]);
  });

  it('sends the credentials of a mirror URL as Basic auth', async () => {
    const dir = await tempModelsDir();
    const withCredentials = mavenUrl.replace('http://', 'http://reader:s3cret@');
    await fetchFrom(jarSpec, dir, { mavenUrl: withCredentials });
    expect(repo.authorizations).toEqual([
      `Basic ${Buffer.from('reader:s3cret').toString('base64')}`,
    ]);
  });
});

describe('fetchModel with a zip split across packages', () => {
  it('joins the parts in order, checks the whole, and takes its files out', async () => {
    const dir = await tempModelsDir();
    const fetched = await fetchFrom(splitSpec, dir);
    expect(fetched.bytes).toBe(partJars[0]!.length + partJars[1]!.length);
    expect(await readFile(join(fetched.path, 'model.onnx'))).toEqual(graph);
    expect((await readdir(fetched.path)).sort()).toEqual(
      [MANIFEST_FILE, 'model.onnx', 'tokenizer.json'].sort(),
    );
    expect(await readdir(dir)).toEqual(['tiny-split']); // parts, jars and the zip are gone
  });

  it('refuses a joined zip whose hash differs, naming it, and leaves nothing behind', async () => {
    const dir = await tempModelsDir();
    const wrong = 'e'.repeat(64);
    const bad = { ...splitSpec, archives: [{ ...splitSpec.archives![0]!, sha256: wrong }] };
    const error = await rejection(fetchFrom(bad, dir));
    expect(error.reason).toBe('corrupt');
    expect(error.message).toContain('m.zip');
    expect(error.message).toContain(wrong);
    expect(error.message).toContain(sha256(inner));
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a part whose hash differs from the pinned one', async () => {
    const dir = await tempModelsDir();
    const archive = splitSpec.archives![0]!;
    const wrong = 'd'.repeat(64);
    const bad = {
      ...splitSpec,
      archives: [
        { ...archive, parts: [archive.parts[0]!, { ...archive.parts[1]!, sha256: wrong }] },
      ],
    };
    const error = await rejection(fetchFrom(bad, dir));
    expect(error.reason).toBe('corrupt');
    expect(error.message).toContain('input/m.zip.002');
    expect(error.message).toContain(wrong);
    expect(await readdir(dir)).toEqual([]);
  });
});
