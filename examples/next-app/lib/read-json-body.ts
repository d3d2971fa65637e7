/** The answer of {@link readJsonBody}: the parsed body, or the response refusing it. */
export type JsonBody = { value: unknown } | { response: Response };

/**
 * Reads a small JSON body with a cap: refused with 413 from its `Content-Length` before any of it
 * is read, or as soon as the bytes streaming in pass `maxBytes` (a chunked body has no length to
 * trust). Without the cap, `request.json()` buffers whatever a client sends. A body that is not
 * JSON gives `{ value: undefined }`, for the route to answer 400 in its own words.
 *
 * @example
 * ```ts
 * const body = await readJsonBody(request, 64 * 1024);
 * if ('response' in body) return body.response;
 * ```
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<JsonBody> {
  const tooLarge = () => ({
    response: Response.json(
      { error: `The body is larger than ${maxBytes} bytes.` },
      { status: 413 },
    ),
  });
  if (Number(request.headers.get('content-length') ?? Number.NaN) > maxBytes) {
    await request.body?.cancel();
    return tooLarge();
  }
  if (request.body === null) return { value: undefined };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return tooLarge();
    }
    chunks.push(value);
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { value: undefined };
  }
}
