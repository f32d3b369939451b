/**
 * Recognition of raw HTML in markdown: the start and end conditions of HTML blocks and the
 * inline HTML constructs (tags, comments, processing instructions, declarations, CDATA).
 * The parser only recognizes HTML; whether it is emitted is the renderer's decision.
 * @module htmlSyntax
 */

const ATTRIBUTE = "(?:\\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\\s*=\\s*(?:[^\\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)";
const OPEN_TAG = `<[A-Za-z][A-Za-z0-9-]*${ATTRIBUTE}*\\s*\\/?>`;
const CLOSING_TAG = "<\\/[A-Za-z][A-Za-z0-9-]*\\s*>";
const INLINE_HTML = new RegExp(
  `(?:${OPEN_TAG}|${CLOSING_TAG}|<!---->|<!--(?:-?[^>-])(?:-?[^-])*-->|<\\?[\\s\\S]*?\\?>|<![A-Za-z][^>]*>|<!\\[CDATA\\[[\\s\\S]*?\\]\\]>)`,
  "y",
);
const COMPLETE_TAG_LINE = new RegExp(`^(?:${OPEN_TAG}|${CLOSING_TAG})[ \\t]*$`);

/**
 * Tag names that start an HTML block of kind 6 (block ends at a blank line).
 * @type {ReadonlySet<string>}
 */
export const BLOCK_TAG_NAMES = new Set(("address article aside base basefont blockquote body caption center " +
  "col colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form frame frameset " +
  "h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem nav noframes ol " +
  "optgroup option p param search section summary table tbody td tfoot th thead title tr track ul").split(" "));

const RAW_TEXT_TAGS = /^<(script|pre|style|textarea)(?=[\s>]|$)/i;

/**
 * Classify the start of an HTML block (line already stripped of container markers).
 * Kinds follow CommonMark: 1 `<script|pre|style|textarea`, 2 comment `<!--`, 3 `<?`,
 * 4 declaration `<!X`, 5 `<![CDATA[`, 6 a known block-level tag name (open or close),
 * 7 any other complete open or closing tag alone on its line.
 * @param {string} line
 * @returns {number} the kind 1-7, or 0 when the line does not start an HTML block
 */
export function matchHtmlBlockStart(line) {
  const m = /^ {0,3}(<.*)$/.exec(line);
  if (m === null) return 0;
  const s = m[1];
  if (RAW_TEXT_TAGS.test(s)) return 1;
  if (s.startsWith("<!--")) return 2;
  if (s.startsWith("<?")) return 3;
  if (/^<![A-Za-z]/.test(s)) return 4;
  if (s.startsWith("<![CDATA[")) return 5;
  const tag = /^<\/?([A-Za-z][A-Za-z0-9-]*)(?=[\s>]|\/>|$)/.exec(s);
  if (tag !== null && BLOCK_TAG_NAMES.has(tag[1].toLowerCase())) return 6;
  if (COMPLETE_TAG_LINE.test(s)) return 7;
  return 0;
}

/**
 * Whether `line` satisfies the end condition of an HTML block of the given kind. Kinds 1-5
 * end on the line containing their terminator (`</script>` etc., `-->`, `?>`, `>`, `]]>`);
 * kinds 6 and 7 end at a blank line, which the caller detects, so this returns false for them.
 * @param {string} line
 * @param {number} kind 1-7 as returned by {@link matchHtmlBlockStart}
 * @returns {boolean}
 */
export function htmlBlockEnds(line, kind) {
  switch (kind) {
    case 1: return /<\/(?:script|pre|style|textarea)>/i.test(line);
    case 2: return line.includes("-->");
    case 3: return line.includes("?>");
    case 4: return line.includes(">");
    case 5: return line.includes("]]>");
    default: return false;
  }
}

/**
 * Length of the inline raw HTML construct starting at `pos` (`<` expected there): an open
 * tag with attributes, a closing tag, a comment, a processing instruction, a declaration or
 * a CDATA section.
 * @param {string} text
 * @param {number} pos
 * @returns {number} number of characters matched, 0 if none
 */
export function matchInlineHtml(text, pos) {
  INLINE_HTML.lastIndex = pos;
  const m = INLINE_HTML.exec(text);
  return m === null ? 0 : m[0].length;
}
