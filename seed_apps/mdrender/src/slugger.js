/**
 * Heading identifiers: turning heading text into URL-fragment slugs and keeping them unique
 * within a document.
 * @module slugger
 */
import { textContent, walk } from "./ast.js";

/**
 * Turn text into a slug: lower-case it, drop every character that is not a letter, digit,
 * whitespace, `-` or `_` (Unicode-aware), trim, and replace each whitespace run with `-`.
 * @param {string} text
 * @returns {string} the slug, possibly empty
 */
export function slugify(text) {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s+/g, "-");
}

/**
 * Generates unique slugs: the first use of a slug returns it unchanged, later uses get
 * `-1`, `-2`, ... appended, skipping any candidate that is already taken (including ones
 * claimed with {@link Slugger#reserve}). Empty slugs become `section`.
 */
export class Slugger {
  /** Create a slugger with no slugs used yet. */
  constructor() {
    this.used = new Set();
    this.nextSuffix = new Map();
  }

  /**
   * Claim an identifier so that generated slugs never collide with it.
   * @param {string} id
   */
  reserve(id) {
    this.used.add(id);
  }

  /**
   * Unique slug for `text`.
   * @param {string} text
   * @returns {string}
   */
  slug(text) {
    const base = slugify(text) || "section";
    if (!this.used.has(base)) {
      this.used.add(base);
      return base;
    }
    let n = this.nextSuffix.get(base) ?? 1;
    while (this.used.has(`${base}-${n}`)) n += 1;
    this.nextSuffix.set(base, n + 1);
    const candidate = `${base}-${n}`;
    this.used.add(candidate);
    return candidate;
  }
}

/**
 * Give every heading in the tree an `id` property derived from its text, unique within the
 * tree. Headings that already have an `id` keep it (and it is reserved first, so generated ids
 * never duplicate it).
 * @param {object} ast a document node
 * @param {{prefix?: string}} [options] `prefix` is prepended to generated ids
 * @returns {string[]} the ids of all headings, in document order
 */
export function assignHeadingIds(ast, options = {}) {
  const prefix = options.prefix ?? "";
  const slugger = new Slugger();
  const headings = [];
  walk(ast, (node) => {
    if (node.type === "heading") headings.push(node);
  });
  for (const heading of headings) {
    if (typeof heading.id === "string") slugger.reserve(heading.id.slice(prefix.length));
  }
  for (const heading of headings) {
    if (typeof heading.id !== "string") heading.id = prefix + slugger.slug(textContent(heading));
  }
  return headings.map((h) => h.id);
}
