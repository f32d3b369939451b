/**
 * URL helpers used by the renderer: percent-encoding of link destinations and the
 * scheme allow-list behind safe mode.
 * @module urls
 */

const URL_SAFE = /[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/;
const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]{1,31}):/;

/** Schemes allowed in safe mode for links and images. */
export const SAFE_SCHEMES = Object.freeze(["http", "https", "mailto", "tel", "ftp"]);

const SAFE_DATA_IMAGE = /^data:image\/(?:png|gif|jpeg|webp);/i;

/**
 * Percent-encode a link destination for use in an `href`/`src` attribute.
 * Characters that are legal in URLs (unreserved, reserved and `%`) are kept; an existing
 * `%XX` escape is preserved while a `%` not followed by two hex digits becomes `%25`;
 * every other character (spaces, non-ASCII, `"`, `<`, backslash, ...) is replaced by the
 * percent-encoded bytes of its UTF-8 form.
 * @param {string} url
 * @returns {string}
 */
export function normalizeUri(url) {
  let out = "";
  for (let i = 0; i < url.length; i++) {
    const ch = url[i];
    if (ch === "%") {
      out += HEX_PAIR.test(url.slice(i + 1, i + 3)) ? "%" : "%25";
    } else if (URL_SAFE.test(ch)) {
      out += ch;
    } else {
      const code = url.codePointAt(i);
      const full = String.fromCodePoint(code);
      out += code >= 0xd800 && code <= 0xdfff ? "%EF%BF%BD" : encodeURIComponent(full);
      i += full.length - 1;
    }
  }
  return out;
}

/**
 * Extract the lower-cased scheme of an absolute URL. ASCII control characters and
 * whitespace are ignored first, because browsers ignore them too (`java\tscript:`).
 * @param {string} url
 * @returns {string | null} the scheme without `:`, or null for relative URLs
 */
export function getScheme(url) {
  const compact = url.replace(/[\u0000-\u0020\u007f]/g, "");
  const m = SCHEME.exec(compact);
  return m === null ? null : m[1].toLowerCase();
}

/**
 * Decide whether a URL may be emitted in safe mode. Relative URLs (no scheme) and the
 * schemes in {@link SAFE_SCHEMES} are safe. `data:` URLs are safe only for images and only
 * for PNG, GIF, JPEG and WebP payloads; everything else (`javascript:`, `vbscript:`,
 * `file:`, other `data:`) is unsafe.
 * @param {string} url the destination as written (entities already decoded)
 * @param {{image?: boolean}} [context] set `image` for `<img src>`
 * @returns {boolean}
 */
export function isSafeUrl(url, context = {}) {
  const scheme = getScheme(url);
  if (scheme === null) return true;
  if (SAFE_SCHEMES.includes(scheme)) return true;
  if (scheme === "data" && context.image === true) {
    return SAFE_DATA_IMAGE.test(url.replace(/[\u0000-\u0020\u007f]/g, ""));
  }
  return false;
}
