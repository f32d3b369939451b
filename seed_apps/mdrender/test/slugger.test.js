import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createNode } from "../src/ast.js";
import { Slugger, assignHeadingIds, slugify } from "../src/slugger.js";

const heading = (value, props = {}) => createNode("heading", { level: 2, ...props, children: [createNode("text", { value })] });

describe("slugger", () => {
  test("slugify lower-cases, drops punctuation and joins words with hyphens", () => {
    assert.equal(slugify("  Hello, World!  "), "hello-world");
    assert.equal(slugify("a  b\tc"), "a-b-c");
  });

  test("slugify keeps letters and digits of any script plus hyphens and underscores", () => {
    assert.equal(slugify("Über_straße 2-go"), "über_straße-2-go");
    assert.equal(slugify("日本語 テスト"), "日本語-テスト");
  });

  test("slugify returns an empty string for text without slug characters", () => {
    assert.equal(slugify("?!*"), "");
  });

  test("Slugger appends increasing suffixes to repeated slugs", () => {
    const s = new Slugger();
    assert.deepEqual([s.slug("Intro"), s.slug("intro"), s.slug("INTRO!")], ["intro", "intro-1", "intro-2"]);
  });

  test("Slugger skips suffixed candidates that are already taken", () => {
    const s = new Slugger();
    assert.deepEqual([s.slug("a-1"), s.slug("a"), s.slug("a")], ["a-1", "a", "a-2"]);
  });

  test("Slugger uses 'section' for empty slugs and respects reserved ids", () => {
    const s = new Slugger();
    s.reserve("section");
    assert.equal(s.slug("!!!"), "section-1");
  });

  test("assignHeadingIds sets unique prefixed ids and returns them in order", () => {
    const doc = createNode("document", { children: [heading("Setup"), createNode("paragraph"), heading("Setup")] });
    assert.deepEqual(assignHeadingIds(doc, { prefix: "doc-" }), ["doc-setup", "doc-setup-1"]);
    assert.equal(doc.children[2].id, "doc-setup-1");
  });

  test("assignHeadingIds keeps existing ids and avoids generating duplicates of them", () => {
    const doc = createNode("document", { children: [heading("Usage"), heading("Other", { id: "usage" })] });
    assert.deepEqual(assignHeadingIds(doc), ["usage-1", "usage"]);
  });
});
