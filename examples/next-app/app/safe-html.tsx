'use client';

// HTML a python cell showed (a DataFrame's table, IPython's HTML()) comes from model-written code
// in the sandbox: it reaches the page only through DOMPurify, allowing table and text markup and
// nothing that runs, loads or styles.
import DOMPurify, { type Config } from 'dompurify';
import { useEffect, useRef, useState } from 'react';

// A DataFrame's table (pandas' <style scoped> goes, with its contents) and text formatting.
const TABLE_TAGS = 'table caption colgroup col thead tbody tfoot tr th td'.split(' ');
const TEXT_TAGS = (
  'div span p br hr b strong i em u s small sub sup code pre kbd samp var ' +
  'blockquote ul ol li dl dt dd h1 h2 h3 h4 h5 h6'
).split(' ');
// Outside the allow-list already; named too, so a later edit to it cannot let them in.
const NEVER_TAGS =
  'script style img iframe svg math form input object embed link meta base a'.split(' ');

const CONFIG: Config = {
  ALLOWED_TAGS: [...TABLE_TAGS, ...TEXT_TAGS],
  // Table spans only: no class or id (the page's own styles and DOM clobbering), no style, no URLs.
  ALLOWED_ATTR: ['colspan', 'rowspan'],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  FORBID_TAGS: NEVER_TAGS,
  FORBID_ATTR: ['style', 'href', 'src', 'srcset', 'action', 'formaction', 'xlink:href'],
};

/**
 * Untrusted HTML, sanitised in the browser (DOMPurify needs a DOM, so nothing renders on the
 * server) and appended as nodes: the clean tree is never serialised and parsed again. Where
 * DOMPurify cannot run, `text` is shown instead.
 *
 * @example
 * <SafeHtml html={result.html} text={result.text} />
 */
export function SafeHtml({ html, text }: { html: string; text: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [unsupported, setUnsupported] = useState(false);
  useEffect(() => {
    if (!DOMPurify.isSupported) {
      setUnsupported(true);
      return;
    }
    box.current?.replaceChildren(
      DOMPurify.sanitize(html, { ...CONFIG, RETURN_DOM_FRAGMENT: true }),
    );
  }, [html]);
  // React renders no children here: the effect owns the box's contents.
  return unsupported ? (
    <pre className="result-text">{text}</pre>
  ) : (
    <div ref={box} className="safe-html" />
  );
}
