import type { ToolSet } from 'ai';
import { jsonSchema, tool } from 'ai';

/** A small realistic catalog: names and descriptions as MCP servers write them. */
export const BASIC_TOOLS: { name: string; description: string }[] = [
  { name: 'get_weather', description: 'Get the current weather conditions for a city' },
  { name: 'get_forecast', description: 'Weather forecast for the next days in a city' },
  { name: 'send_email', description: 'Send an email message to a recipient' },
  { name: 'list_files', description: 'List files in a directory of the workspace' },
  { name: 'read_file', description: 'Read the contents of a file' },
  { name: 'create_issue', description: 'Create an issue in a GitHub repository' },
  { name: 'search_web', description: 'Search the web for pages matching a query' },
  { name: 'translate_text', description: 'Translate text between languages' },
  {
    name: 'convert_currency',
    description: 'Convert an amount between currencies at the current rate',
  },
  { name: 'stock_quote', description: 'Latest stock price quote for a ticker symbol' },
  { name: 'book_flight', description: 'Book a flight between two airports' },
  { name: 'python', description: 'Run Python code in a sandbox and return its output' },
];

// Pronounceable made-up words: each synthetic tool gets its own, so a query
// naming it has exactly one right answer.
export function codeWord(i: number): string {
  const consonants = 'bdfgklmnprstvz';
  const vowels = 'aeiou';
  let word = '';
  let n = i + 1000;
  while (n > 0) {
    word +=
      consonants[n % consonants.length]! +
      vowels[Math.floor(n / consonants.length) % vowels.length]!;
    n = Math.floor(n / (consonants.length * vowels.length));
  }
  return `${word}x`;
}

/** `count` synthetic tools `widget_<i>`, each about its own code word. */
export function syntheticTools(count: number): { name: string; description: string }[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `widget_${i}`,
    description: `Manage ${codeWord(i)} records and their settings`,
  }));
}

/** Turns descriptors into an AI SDK tool set whose `execute` records calls. */
export function toToolSet(
  tools: { name: string; description: string }[],
  executed: string[] = [],
): ToolSet {
  return Object.fromEntries(
    tools.map(({ name, description }) => [
      name,
      tool({
        description,
        inputSchema: jsonSchema<{ query?: string }>({
          type: 'object',
          properties: { query: { type: 'string' } },
        }),
        execute: async () => {
          executed.push(name);
          return `${name} done`;
        },
      }),
    ]),
  );
}
