// The one DOM helper the python modules share. Text goes in as textContent, never as markup.

/**
 * Creates an element with a class and text.
 *
 * @example
 * el('pre', 'attempt-output', stdout);
 */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
