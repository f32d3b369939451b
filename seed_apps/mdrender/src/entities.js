/**
 * HTML character handling: escaping text for HTML output, decoding named and numeric
 * character references found in markdown source, and backslash-escape removal.
 * Used by the block parser (info strings, link definitions), the inline parser and the renderer.
 * @module entities
 */

/**
 * Named character references understood by the parser (a common subset of the HTML5 list).
 * Keys are entity names without `&` and `;`, values the decoded text.
 * @type {Readonly<Record<string, string>>}
 */
export const NAMED_ENTITIES = Object.freeze({
  amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: "\u00a0",
  copy: "\u00a9", reg: "\u00ae", trade: "\u2122", hellip: "\u2026", mdash: "\u2014", ndash: "\u2013",
  lsquo: "\u2018", rsquo: "\u2019", ldquo: "\u201c", rdquo: "\u201d", laquo: "\u00ab", raquo: "\u00bb",
  sbquo: "\u201a", bdquo: "\u201e", bull: "\u2022", middot: "\u00b7", deg: "\u00b0", plusmn: "\u00b1",
  times: "\u00d7", divide: "\u00f7", frac12: "\u00bd", frac14: "\u00bc", frac34: "\u00be",
  sup1: "\u00b9", sup2: "\u00b2", sup3: "\u00b3", micro: "\u00b5", para: "\u00b6", sect: "\u00a7",
  cent: "\u00a2", pound: "\u00a3", euro: "\u20ac", yen: "\u00a5", curren: "\u00a4", iexcl: "\u00a1",
  iquest: "\u00bf", shy: "\u00ad", macr: "\u00af", acute: "\u00b4", cedil: "\u00b8", uml: "\u00a8",
  ordf: "\u00aa", ordm: "\u00ba", not: "\u00ac", brvbar: "\u00a6",
  larr: "\u2190", rarr: "\u2192", uarr: "\u2191", darr: "\u2193", harr: "\u2194",
  lArr: "\u21d0", rArr: "\u21d2", uArr: "\u21d1", dArr: "\u21d3", hArr: "\u21d4",
  forall: "\u2200", part: "\u2202", exist: "\u2203", empty: "\u2205", nabla: "\u2207",
  isin: "\u2208", notin: "\u2209", ni: "\u220b", prod: "\u220f", sum: "\u2211", minus: "\u2212",
  lowast: "\u2217", radic: "\u221a", prop: "\u221d", infin: "\u221e", ang: "\u2220", and: "\u2227",
  or: "\u2228", cap: "\u2229", cup: "\u222a", int: "\u222b", there4: "\u2234", sim: "\u223c",
  cong: "\u2245", asymp: "\u2248", ne: "\u2260", equiv: "\u2261", le: "\u2264", ge: "\u2265",
  sub: "\u2282", sup: "\u2283", nsub: "\u2284", sube: "\u2286", supe: "\u2287", oplus: "\u2295",
  otimes: "\u2297", perp: "\u22a5", sdot: "\u22c5", lceil: "\u2308", rceil: "\u2309",
  lfloor: "\u230a", rfloor: "\u230b", loz: "\u25ca", spades: "\u2660", clubs: "\u2663",
  hearts: "\u2665", diams: "\u2666", dagger: "\u2020", Dagger: "\u2021", permil: "\u2030",
  prime: "\u2032", Prime: "\u2033", oline: "\u203e", frasl: "\u2044", ensp: "\u2002",
  emsp: "\u2003", thinsp: "\u2009", zwnj: "\u200c", zwj: "\u200d",
  Alpha: "\u0391", Beta: "\u0392", Gamma: "\u0393", Delta: "\u0394", Theta: "\u0398",
  Lambda: "\u039b", Pi: "\u03a0", Sigma: "\u03a3", Phi: "\u03a6", Psi: "\u03a8", Omega: "\u03a9",
  alpha: "\u03b1", beta: "\u03b2", gamma: "\u03b3", delta: "\u03b4", epsilon: "\u03b5",
  zeta: "\u03b6", eta: "\u03b7", theta: "\u03b8", iota: "\u03b9", kappa: "\u03ba", lambda: "\u03bb",
  mu: "\u03bc", nu: "\u03bd", xi: "\u03be", pi: "\u03c0", rho: "\u03c1", sigma: "\u03c3",
  tau: "\u03c4", upsilon: "\u03c5", phi: "\u03c6", chi: "\u03c7", psi: "\u03c8", omega: "\u03c9",
  Agrave: "\u00c0", Aacute: "\u00c1", Auml: "\u00c4", Aring: "\u00c5", AElig: "\u00c6",
  Ccedil: "\u00c7", Eacute: "\u00c9", Ntilde: "\u00d1", Ouml: "\u00d6", Oslash: "\u00d8",
  Uuml: "\u00dc", szlig: "\u00df", agrave: "\u00e0", aacute: "\u00e1", acirc: "\u00e2",
  auml: "\u00e4", aring: "\u00e5", aelig: "\u00e6", ccedil: "\u00e7", egrave: "\u00e8",
  eacute: "\u00e9", ecirc: "\u00ea", euml: "\u00eb", iacute: "\u00ed", iuml: "\u00ef",
  ntilde: "\u00f1", oacute: "\u00f3", ocirc: "\u00f4", ouml: "\u00f6", oslash: "\u00f8",
  uacute: "\u00fa", uuml: "\u00fc", yuml: "\u00ff", ngE: "\u2267\u0338",
});

const REPLACEMENT_CHARACTER = "\ufffd";
const ASCII_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
const ENTITY_AT = /&(?:#[xX]([0-9a-fA-F]{1,6})|#([0-9]{1,7})|([A-Za-z][A-Za-z0-9]{0,31}));/y;
const HTML_ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" };

/**
 * Escape text for use in HTML content or a double-quoted attribute value:
 * `&`, `<`, `>` and `"` become `&amp;`, `&lt;`, `&gt;` and `&quot;`. Other characters
 * (including `'`) are left unchanged.
 * @param {string} text
 * @returns {string}
 */
export function escapeHtml(text) {
  return text.replace(/[&<>"]/g, (ch) => HTML_ESCAPES[ch]);
}

/**
 * Whether `ch` is one of the 32 ASCII punctuation characters that a backslash can escape.
 * @param {string} ch a single character (other lengths return false)
 * @returns {boolean}
 */
export function isAsciiPunctuation(ch) {
  return ch.length === 1 && ASCII_PUNCTUATION.includes(ch);
}

/**
 * Decode the body of a numeric character reference.
 * @param {string} digits the digits only, without `&#`, `x` or `;`
 * @param {boolean} hex whether `digits` are hexadecimal
 * @returns {string} the character; U+FFFD for code point 0, surrogates and values above U+10FFFF
 */
export function decodeNumericReference(digits, hex) {
  const code = Number.parseInt(digits, hex ? 16 : 10);
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
    return REPLACEMENT_CHARACTER;
  }
  return String.fromCodePoint(code);
}

/**
 * Try to read a character reference (`&name;`, `&#123;`, `&#x1F;`) starting at `pos`.
 * Named references must be in {@link NAMED_ENTITIES}; decimal references allow 1-7 digits,
 * hexadecimal ones 1-6.
 * @param {string} text
 * @param {number} pos index of the `&`
 * @returns {{value: string, length: number} | null} decoded text and number of source
 *   characters consumed, or null when no valid reference starts at `pos`
 */
export function matchEntity(text, pos) {
  ENTITY_AT.lastIndex = pos;
  const m = ENTITY_AT.exec(text);
  if (m === null) return null;
  let value;
  if (m[1] !== undefined) value = decodeNumericReference(m[1], true);
  else if (m[2] !== undefined) value = decodeNumericReference(m[2], false);
  else if (Object.hasOwn(NAMED_ENTITIES, m[3])) value = NAMED_ENTITIES[m[3]];
  else return null;
  return { value, length: m[0].length };
}

/**
 * Replace every valid character reference in `text` by the text it stands for.
 * Invalid or unknown references (e.g. `&bogus;`, `& x`) are left as they are.
 * @param {string} text
 * @returns {string}
 */
export function decodeEntities(text) {
  let out = "";
  let last = 0;
  let pos = text.indexOf("&");
  while (pos !== -1) {
    const entity = matchEntity(text, pos);
    if (entity !== null) {
      out += text.slice(last, pos) + entity.value;
      last = pos + entity.length;
      pos = text.indexOf("&", last);
    } else {
      pos = text.indexOf("&", pos + 1);
    }
  }
  return out + text.slice(last);
}

/**
 * Resolve backslash escapes and character references, as done for link destinations,
 * link titles and code fence info strings. A backslash before ASCII punctuation is removed
 * (and the punctuation is taken literally, so `\&amp;` stays `&amp;`); any other backslash is kept.
 * @param {string} text
 * @returns {string}
 */
export function unescapeString(text) {
  if (!text.includes("\\") && !text.includes("&")) return text;
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "\\" && i + 1 < text.length && isAsciiPunctuation(text[i + 1])) {
      out += text[i + 1];
      i += 2;
    } else if (ch === "&") {
      const entity = matchEntity(text, i);
      if (entity !== null) {
        out += entity.value;
        i += entity.length;
      } else {
        out += ch;
        i += 1;
      }
    } else {
      out += ch;
      i += 1;
    }
  }
  return out;
}
