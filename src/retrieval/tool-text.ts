import { sha256Base64Url } from '../util/sha256.ts';
import { splitWords } from './lexical/split-words.ts';
import { type ToolFields, toolFields } from './tool-fields.ts';
import type { ToolDescriptor } from './types.ts';

// Embedding models read the first few hundred tokens best; parameter lists of
// big tools would otherwise drown the description.
const MAX_EMBEDDING_TEXT = 2_000;

/**
 * The text a dense model embeds for a tool: its name in words, description
 * and parameters, e.g. "get weather (getWeather): Current weather. Parameters:
 * city, unit".
 */
export function toolEmbeddingText(tool: ToolDescriptor): string {
  return embeddingTextOf(toolFields(tool));
}

/** {@link toolEmbeddingText} from fields already extracted (a catalog's are, for the lexical index). */
export function embeddingTextOf(fields: ToolFields): string {
  const words = splitWords(fields.name).join(' ');
  const parts = [`${words} (${fields.name})${fields.server ? ` [${fields.server}]` : ''}`];
  if (fields.description) parts.push(`: ${fields.description}`);
  if (fields.parameterNames)
    parts.push(` Parameters: ${fields.parameterNames.split(' ').join(', ')}`);
  return parts.join('').slice(0, MAX_EMBEDDING_TEXT);
}

// Bumped whenever `embeddingTextOf` changes what it writes: a snapshot is keyed by the tools'
// content hashes, and must not be read for texts that would now be written differently.
const EMBEDDING_TEXT_FORMAT = 't1';

/**
 * A tool's key in a catalog snapshot, from its {@link toolHash}: it changes with the tool's
 * embedding text, so a warm start finds its vectors without building those texts.
 */
export function toolEmbeddingKey(hash: string): string {
  return `${EMBEDDING_TEXT_FORMAT}:${hash}`;
}

/** A content hash of everything indexed about a tool: unchanged tools are not re-embedded. */
export function toolHash(tool: ToolDescriptor): string {
  return sha256Base64Url(
    JSON.stringify([
      tool.name,
      tool.description ?? '',
      tool.server ?? '',
      tool.inputSchema ?? null,
    ]),
  );
}
