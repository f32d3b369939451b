/**
 * Inline parser: turns the raw text of a paragraph, heading or table cell into inline nodes
 * (text, code spans, emphasis, strong, strikethrough, links, images, autolinks, raw HTML,
 * soft and hard breaks).
 *
 * It makes one left-to-right pass, producing a flat node list plus a delimiter list (emphasis
 * runs) and a bracket stack (potential link/image openers). Links are resolved when their `]`
 * is met; emphasis is resolved per link and finally for the whole text.
 * @module inlines/inlineParser
 */
import { createNode } from "../ast.js";
import { isAsciiPunctuation, matchEntity } from "../entities.js";
import { matchInlineHtml } from "../htmlSyntax.js";
import { normalizeLabel, scanInlineLinkTail, scanLinkLabel } from "../linkSyntax.js";
import { DelimiterList, delimiterFlags, processEmphasis } from "./delimiters.js";

const SPECIAL_CHARS = /[\\`*_~[\]!<&\n]/g;
const URI_AUTOLINK = /<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>/y;
const EMAIL_AUTOLINK = /<([A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)>/y;

/**
 * Normalize the content of a code span: line endings become spaces, and when the content
 * both begins and ends with a space but is not all spaces, one space is removed from each end.
 * @param {string} content the text between the backtick runs
 * @returns {string}
 */
export function normalizeCodeSpan(content) {
  const s = content.replace(/\n/g, " ");
  if (s.length >= 2 && s.startsWith(" ") && s.endsWith(" ") && s.trim() !== "") return s.slice(1, -1);
  return s;
}

/**
 * Merge adjacent text nodes (recursively in container children) and drop empty text nodes.
 * @param {object[]} nodes
 * @returns {object[]} a new array; container nodes are updated in place
 */
export function mergeTextNodes(nodes) {
  const out = [];
  for (const node of nodes) {
    if (node.type === "text") {
      if (node.value === "") continue;
      const prev = out[out.length - 1];
      if (prev !== undefined && prev.type === "text") {
        prev.value += node.value;
        continue;
      }
      out.push({ ...node });
    } else {
      if (Array.isArray(node.children)) node.children = mergeTextNodes(node.children);
      out.push(node);
    }
  }
  return out;
}

/** The character (a full code point) just before `pos`, or "" at the start. */
function charBefore(text, pos) {
  if (pos === 0) return "";
  const code = text.charCodeAt(pos - 1);
  if (code >= 0xdc00 && code <= 0xdfff && pos >= 2) return text.slice(pos - 2, pos);
  return text[pos - 1];
}

/** The character (a full code point) at `pos`, or "" past the end. */
function charAt(text, pos) {
  if (pos >= text.length) return "";
  return String.fromCodePoint(text.codePointAt(pos));
}

/**
 * Parser for inline content. Each call to {@link InlineParser#parse} works on a fresh parse
 * state `{text, pos, nodes, delimiters, brackets}`: the input, the current index, the flat list
 * of nodes produced so far, the {@link DelimiterList} of emphasis runs, and the stack of
 * bracket openers `{node, image, start, active, bottom}`.
 */
export class InlineParser {
  /**
   * @param {object} [options]
   * @param {Map<string, {destination: string, title: string | null}>} [options.refs] link
   *   reference definitions, keyed by normalized label
   * @param {boolean} [options.strikethrough=true] recognize `~~text~~` (and `~text~`)
   */
  constructor(options = {}) {
    this.refs = options.refs ?? new Map();
    this.strikethrough = options.strikethrough ?? true;
  }

  /**
   * Parse inline markdown.
   * @param {string} text raw inline content (lines joined with `\n`, no trailing whitespace)
   * @returns {object[]} inline nodes, with adjacent text merged
   */
  parse(text) {
    const s = { text, pos: 0, nodes: [], delimiters: new DelimiterList(), brackets: [] };
    while (s.pos < text.length) {
      const ch = text[s.pos];
      switch (ch) {
        case "\\": this.parseBackslash(s); break;
        case "`": this.parseCodeSpan(s); break;
        case "*":
        case "_":
        case "~": this.parseDelimiterRun(s, ch); break;
        case "[": this.pushBracket(s, false); break;
        case "!": this.parseBang(s); break;
        case "]": this.parseCloseBracket(s); break;
        case "<": this.parseAngle(s); break;
        case "&": this.parseEntity(s); break;
        case "\n": this.parseNewline(s); break;
        default: this.parsePlainText(s);
      }
    }
    processEmphasis(s.nodes, s.delimiters, null);
    return mergeTextNodes(s.nodes);
  }

  /**
   * Append a text node to the parse state's node list.
   * @param {object} s parse state
   * @param {string} value
   * @returns {object} the new text node
   */
  pushText(s, value) {
    const node = createNode("text", { value });
    s.nodes.push(node);
    return node;
  }

  /**
   * Consume ordinary text from `s.pos` up to (not including) the next character that may
   * start inline syntax (one of \\ ` * _ ~ [ ] ! < & and newline), as one text node.
   * @param {object} s parse state
   */
  parsePlainText(s) {
    SPECIAL_CHARS.lastIndex = s.pos + 1;
    const m = SPECIAL_CHARS.exec(s.text);
    const end = m === null ? s.text.length : m.index;
    this.pushText(s, s.text.slice(s.pos, end));
    s.pos = end;
  }

  /**
   * Handle a backslash: before a newline it is a hard break (leading spaces of the next line
   * are skipped); before ASCII punctuation it makes that character literal text; otherwise the
   * backslash itself is literal text.
   * @param {object} s parse state
   */
  parseBackslash(s) {
    const next = s.text[s.pos + 1];
    if (next === "\n") {
      s.nodes.push(createNode("hardbreak"));
      s.pos = this.skipLineStart(s.text, s.pos + 2);
    } else if (next !== undefined && isAsciiPunctuation(next)) {
      this.pushText(s, next);
      s.pos += 2;
    } else {
      this.pushText(s, "\\");
      s.pos += 1;
    }
  }

  /**
   * Skip the spaces and tabs that start a continuation line.
   * @param {string} text
   * @param {number} pos
   * @returns {number} index of the first non-space character
   */
  skipLineStart(text, pos) {
    let p = pos;
    while (text[p] === " " || text[p] === "\t") p += 1;
    return p;
  }

  /**
   * Handle a backtick run: find the next run of exactly the same length and emit a `code`
   * node with the normalized content between them; if there is none, the run is literal text.
   * @param {object} s parse state
   */
  parseCodeSpan(s) {
    const { text } = s;
    let n = 0;
    while (text[s.pos + n] === "`") n += 1;
    const runs = /`+/g;
    runs.lastIndex = s.pos + n;
    for (let m = runs.exec(text); m !== null; m = runs.exec(text)) {
      if (m[0].length === n) {
        s.nodes.push(createNode("code", { value: normalizeCodeSpan(text.slice(s.pos + n, m.index)) }));
        s.pos = m.index + n;
        return;
      }
    }
    this.pushText(s, "`".repeat(n));
    s.pos += n;
  }

  /**
   * Handle a run of `*`, `_` or `~`: emit it as a text node and, when the flanking rules
   * allow it to open or close, record it in the delimiter list. Tilde runs longer than two,
   * or any tilde run when strikethrough is disabled, are plain text.
   * @param {object} s parse state
   * @param {string} char the delimiter character
   */
  parseDelimiterRun(s, char) {
    const { text } = s;
    let n = 0;
    while (text[s.pos + n] === char) n += 1;
    const run = char.repeat(n);
    if (char === "~" && (!this.strikethrough || n > 2)) {
      this.pushText(s, run);
      s.pos += n;
      return;
    }
    const flags = delimiterFlags(char, charBefore(text, s.pos), charAt(text, s.pos + n));
    const node = this.pushText(s, run);
    if (flags.canOpen || flags.canClose) {
      s.delimiters.push({ char, count: n, canOpen: flags.canOpen, canClose: flags.canClose, node });
    }
    s.pos += n;
  }

  /**
   * Emit `[` (or `![`) as text and push a potential link/image opener on the bracket stack,
   * remembering where the label starts and the current top of the delimiter list.
   * @param {object} s parse state
   * @param {boolean} image whether this is an image opener `![`
   */
  pushBracket(s, image) {
    const node = this.pushText(s, image ? "![" : "[");
    s.pos += image ? 2 : 1;
    s.brackets.push({ node, image, start: s.pos, active: true, bottom: s.delimiters.tail });
  }

  /**
   * Handle `!`: an image opener when followed by `[`, otherwise literal text.
   * @param {object} s parse state
   */
  parseBang(s) {
    if (s.text[s.pos + 1] === "[") this.pushBracket(s, true);
    else {
      this.pushText(s, "!");
      s.pos += 1;
    }
  }

  /**
   * Resolve the link target following `]` at `closePos`: an inline tail `(...)`, a full
   * reference `[label]`, a collapsed reference `[]`, or a shortcut reference (the bracket text
   * itself as label).
   * @param {string} text
   * @param {number} closePos index of `]`
   * @param {number} labelStart index just after the opening bracket
   * @returns {{destination: string, title: string | null, end: number} | null}
   */
  resolveLinkTarget(text, closePos, labelStart) {
    const after = closePos + 1;
    const inline = scanInlineLinkTail(text, after);
    if (inline !== null) return inline;
    let label;
    let end;
    const full = scanLinkLabel(text, after);
    if (full !== null) {
      label = full.label;
      end = full.end;
    } else {
      label = text.slice(labelStart, closePos);
      end = text.startsWith("[]", after) ? after + 2 : after;
      if (label.length > 999 || label.trim() === "") return null;
    }
    const def = this.refs.get(normalizeLabel(label));
    if (def === undefined) return null;
    return { destination: def.destination, title: def.title, end };
  }

  /**
   * Handle `]`. Without an active opener it is literal text. Otherwise, when a link target
   * follows (see {@link InlineParser#resolveLinkTarget}), resolve emphasis inside the brackets,
   * move the nodes after the opener into a new link or image node, and (for links) deactivate
   * all earlier link openers, since links cannot nest. When no target follows, the opener is
   * dropped and `]` is literal text.
   * @param {object} s parse state
   */
  parseCloseBracket(s) {
    const opener = s.brackets[s.brackets.length - 1];
    if (opener === undefined || !opener.active) {
      if (opener !== undefined) s.brackets.pop();
      this.pushText(s, "]");
      s.pos += 1;
      return;
    }
    const target = this.resolveLinkTarget(s.text, s.pos, opener.start);
    if (target === null) {
      s.brackets.pop();
      this.pushText(s, "]");
      s.pos += 1;
      return;
    }
    processEmphasis(s.nodes, s.delimiters, opener.bottom);
    const index = s.nodes.indexOf(opener.node);
    const children = s.nodes.splice(index + 1);
    s.nodes.pop();
    const node = opener.image
      ? createNode("image", { src: target.destination, title: target.title, children })
      : createNode("link", { href: target.destination, title: target.title, children });
    s.nodes.push(node);
    s.brackets.pop();
    if (!opener.image) {
      // Links may not contain other links: earlier `[` openers can no longer form one.
      for (const bracket of s.brackets) if (!bracket.image) bracket.active = false;
    }
    s.pos = target.end;
  }

  /**
   * Handle `<`: a URI autolink, an email autolink (href prefixed with `mailto:`), raw inline
   * HTML, or else a literal `<`.
   * @param {object} s parse state
   */
  parseAngle(s) {
    const { text } = s;
    URI_AUTOLINK.lastIndex = s.pos;
    const uri = URI_AUTOLINK.exec(text);
    if (uri !== null) {
      s.nodes.push(createNode("link", {
        href: uri[1], title: null, autolink: true, children: [createNode("text", { value: uri[1] })],
      }));
      s.pos += uri[0].length;
      return;
    }
    EMAIL_AUTOLINK.lastIndex = s.pos;
    const email = EMAIL_AUTOLINK.exec(text);
    if (email !== null) {
      s.nodes.push(createNode("link", {
        href: `mailto:${email[1]}`, title: null, autolink: true, children: [createNode("text", { value: email[1] })],
      }));
      s.pos += email[0].length;
      return;
    }
    const length = matchInlineHtml(text, s.pos);
    if (length > 0) {
      s.nodes.push(createNode("html_inline", { value: text.slice(s.pos, s.pos + length) }));
      s.pos += length;
      return;
    }
    this.pushText(s, "<");
    s.pos += 1;
  }

  /**
   * Handle `&`: a valid character reference becomes its decoded text, anything else a literal `&`.
   * @param {object} s parse state
   */
  parseEntity(s) {
    const entity = matchEntity(s.text, s.pos);
    if (entity === null) {
      this.pushText(s, "&");
      s.pos += 1;
    } else {
      this.pushText(s, entity.value);
      s.pos += entity.length;
    }
  }

  /**
   * Handle a line ending: a hard break when the preceding text ends with two or more spaces,
   * otherwise a soft break. Trailing spaces of the preceding text and leading spaces of the
   * next line are removed.
   * @param {object} s parse state
   */
  parseNewline(s) {
    const last = s.nodes[s.nodes.length - 1];
    let hard = false;
    if (last !== undefined && last.type === "text") {
      hard = / {2,}$/.test(last.value);
      last.value = last.value.replace(/[ \t]+$/, "");
    }
    s.nodes.push(createNode(hard ? "hardbreak" : "softbreak"));
    s.pos = this.skipLineStart(s.text, s.pos + 1);
  }
}
