import type { LanguageModelMiddleware } from 'ai';

/** The model a call goes to, as the middleware sees it. */
export type ModelIdentity = { provider: string; modelId: string };

/** Options of {@link toolResultImagesMiddleware}. */
export type ToolResultImagesOptions = {
  /**
   * Whether the model takes images inside tool results. Default: OpenAI's and xAI's
   * Responses API, Anthropic, Google and Vertex do; Chat Completions style providers
   * (`openai.chat`, OpenAI-compatible servers, Mistral, Groq, ...) do not: they would get the
   * image's base64 as text, thousands of tokens of noise.
   */
  acceptsImages?: (model: ModelIdentity) => boolean;
};

/** The default of `acceptsImages`. */
export function providerAcceptsToolResultImages({ provider }: ModelIdentity): boolean {
  return /\.responses$|^anthropic(\.|$)|^google(\.|$)|^vertex(\.|$)/.test(provider);
}

type Prompt = Parameters<
  NonNullable<LanguageModelMiddleware['transformParams']>
>[0]['params']['prompt'];
type Message = Prompt[number];
type ToolMessage = Extract<Message, { role: 'tool' }>;
type ToolPart = ToolMessage['content'][number];
type ContentItem = Extract<
  Extract<ToolPart, { type: 'tool-result' }>['output'],
  { type: 'content' }
>['value'][number];

function isImage(item: ContentItem): item is Extract<ContentItem, { type: 'file' }> {
  return item.type === 'file' && item.mediaType.startsWith('image');
}

/**
 * Replaces images in tool results (python charts, MCP screenshots) with a one-line text
 * stand-in for models that take no images there, and leaves them alone for models that do.
 * Tools keep returning images; this decides per model call.
 *
 * @example
 * ```ts
 * const model = wrapLanguageModel({
 *   model: openai.chat('gpt-4.1-mini'),
 *   middleware: [selection.middleware, repairGuardMiddleware(), toolResultImagesMiddleware()],
 * });
 * ```
 */
export function toolResultImagesMiddleware({
  acceptsImages = providerAcceptsToolResultImages,
}: ToolResultImagesOptions = {}): LanguageModelMiddleware {
  return {
    specificationVersion: 'v4',
    async transformParams({ params, model }) {
      if (acceptsImages({ provider: model.provider, modelId: model.modelId })) return params;
      let changed = false;
      const prompt = params.prompt.map((message): Message => {
        if (message.role !== 'tool') return message;
        const content = message.content.map((part): ToolPart => {
          if (part.type !== 'tool-result' || part.output.type !== 'content') return part;
          const items = part.output.value;
          if (!items.some(isImage)) return part;
          changed = true;
          const value = items.map(item =>
            isImage(item)
              ? {
                  type: 'text' as const,
                  text: `[${item.filename ?? 'an image'} (${item.mediaType}) was shown to the user; this model cannot see images in tool results]`,
                }
              : item,
          );
          const output = value.every(item => item.type === 'text')
            ? { type: 'text' as const, value: value.map(item => item.text).join('\n') }
            : { type: 'content' as const, value };
          return { ...part, output };
        });
        return { ...message, content };
      });
      return changed ? { ...params, prompt } : params;
    },
  };
}
