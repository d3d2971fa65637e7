// A python cell whose output is built to mislead or break the chat (issue 45, findings 6 and 7): a
// file named with a right-to-left override (shown as "photo…exe.jpg" if left in) and a value whose
// JSON nests 4,500 levels (more than JSON.stringify can encode on a default stack).
import type { Script } from '../../fixtures/fake-openai/script.ts';

/** What the user asks. */
export const HOSTILE_OUTPUT_QUESTION = 'Save the photo and show its metadata.';

/** The file name with its U+202E taken out: what the page must show and save. */
export const CLEANED_FILE_NAME = 'photogpj.exe';

/** Writes `/tmp/outputs/photo\u202Egpj.exe`. */
export const HOSTILE_FILE_CODE = [
  'import os',
  'os.makedirs("/tmp/outputs", exist_ok=True)',
  'with open("/tmp/outputs/photo\\u202egpj.exe", "wb") as f:',
  '    f.write(b"MZ")',
].join('\n');

/**
 * Shows a value whose `_repr_json_` nests 4,500 lists (the recursion limit raised so the
 * sandbox's own json.dumps gets through).
 */
export const DEEP_JSON_CODE = [
  'import sys',
  'sys.setrecursionlimit(20000)',
  'class Deep:',
  '    def _repr_json_(self):',
  '        value = "bottom"',
  '        for _ in range(4500):',
  '            value = [value]',
  '        return value',
  '    def __repr__(self):',
  '        return "Deep()"',
  'Deep()',
].join('\n');

/** The answer after the two cells. */
export const HOSTILE_OUTPUT_ANSWER = 'The photo is saved and its metadata shown.';

/**
 * The fake model's turns: a python call that writes the file, one that shows the value, then the
 * answer (two calls: the page shows the first even where the second ends the stream).
 *
 * @example
 * fake.setScript(hostileOutputScenario());
 */
export function hostileOutputScenario(): Script {
  return [
    { toolCalls: [{ name: 'python', args: { code: HOSTILE_FILE_CODE } }] },
    { toolCalls: [{ name: 'python', args: { code: DEEP_JSON_CODE } }] },
    { text: HOSTILE_OUTPUT_ANSWER },
  ];
}
