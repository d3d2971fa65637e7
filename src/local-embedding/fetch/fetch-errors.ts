import { LocalModelError } from '../../errors/local-model-error.ts';

/** A URL for a message: no credentials, no query (a signed file URL's token). */
export const shown = (url: URL) => `${url.origin}${url.pathname}`;

/** A registry or download failure: the machine's network or the registry, not the model. */
export const failed = (message: string, cause?: unknown) =>
  new LocalModelError({ reason: 'fetch-failed', message, ...(cause ? { cause } : {}) });

/** Bytes that are not the pinned ones. */
export const corrupt = (message: string) => new LocalModelError({ reason: 'corrupt', message });
