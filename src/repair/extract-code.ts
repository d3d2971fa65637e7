/**
 * The code in a repair model's answer: the first ```python block, else the
 * first fenced block of any language, else the whole text.
 *
 * @example
 * ```ts
 * extractCode('Fixed:\n```python\nprint(1)\n```'); // 'print(1)'
 * ```
 */
export function extractCode(text: string): string {
  const python = /```(?:python|py|python3)[^\n]*\n([\s\S]*?)```/i.exec(text);
  if (python) return (python[1] as string).trim();
  const fenced = /```[^\n]*\n([\s\S]*?)```/.exec(text);
  if (fenced) return (fenced[1] as string).trim();
  return text.trim();
}
