// HTML a python cell showed (a DataFrame's table, IPython's HTML()) comes from model-written code
// in the sandbox: it reaches the page only through DOMPurify (served from node_modules as
// /assets/purify.es.mjs), allowing table and text markup and nothing that runs, loads or styles.
import DOMPurify from './purify.es.mjs';

// A DataFrame's table (pandas' <style scoped> goes, with its contents) and text formatting.
const TABLE_TAGS = 'table caption colgroup col thead tbody tfoot tr th td'.split(' ');
const TEXT_TAGS = (
  'div span p br hr b strong i em u s small sub sup code pre kbd samp var ' +
  'blockquote ul ol li dl dt dd h1 h2 h3 h4 h5 h6'
).split(' ');
// Outside the allow-list already; named too, so a later edit to it cannot let them in.
const NEVER_TAGS =
  'script style img iframe svg math form input object embed link meta base a'.split(' ');

const CONFIG = {
  ALLOWED_TAGS: [...TABLE_TAGS, ...TEXT_TAGS],
  // Table spans only: no class or id (the page's own styles and DOM clobbering), no style, no URLs.
  ALLOWED_ATTR: ['colspan', 'rowspan'],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  FORBID_TAGS: NEVER_TAGS,
  FORBID_ATTR: ['style', 'href', 'src', 'srcset', 'action', 'formaction', 'xlink:href'],
  // A fragment to append: the sanitised tree is never serialised and parsed again.
  RETURN_DOM_FRAGMENT: true,
};

/**
 * The sanitised nodes of `html`, or undefined where DOMPurify cannot run (then show the text).
 *
 * @example
 * const fragment = sanitizedFragment('<table><tr><td>1</td></tr></table><img src=x onerror=alert(1)>');
 * box.append(fragment); // the table only
 */
export function sanitizedFragment(html) {
  if (!DOMPurify.isSupported) return undefined;
  return DOMPurify.sanitize(html, CONFIG);
}
