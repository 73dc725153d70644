/**
 * Source comments justify edge cases by citing the protocol facts in `docs/protocol.md` by section
 * (`docs/protocol.md A.7`, `… D.1 and D.2`, `… Part C quirks 17, 18 and 22`). Every section cited must be
 * one a reader finds there: a heading (`### A.7 …`, `## Part C …`) or a quirk's anchor
 * (`<a id="quirk-17">`). Citations still under the old name of the digest are read the same way, so the
 * sections are checked before and after the citations are renamed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PROTOCOL = readFileSync(join(ROOT, 'docs', 'protocol.md'), 'utf8');

/** `docs/protocol.md`, or the digest's old name (spelt with an escaped dot, so renaming leaves it alone). */
const CITATION = /(?:docs\/protocol\.md|PROTOCOLS\.md)\b/g;

/**
 * The section labels one citation names, read from the text that follows the file name up to the end of
 * the parenthesis, table cell, clause or sentence: `A.7`, `A.1`…`A.3` for `A.1–A.3`, `Part C`,
 * `quirk 17`.
 */
export function citedSections(textAfterName: string): string[] {
  const flat = textAfterName.replace(/\n\s*(?:\*|\/\/)?\s*/g, ' ');
  const clause = /^[^);|]*?(?=[);|]|\.(?:\s|$)|$)/.exec(flat)?.[0] ?? '';
  const labels: string[] = [];
  for (const match of clause.matchAll(/\b([A-D])\.(\d+)(?:\s*[–-]\s*(?:[A-D]\.)?(\d+))?/g)) {
    const first = Number(match[2]);
    const last = match[3] === undefined ? first : Number(match[3]);
    for (let number = first; number <= last; number++) labels.push(`${match[1]!}.${number}`);
  }
  if (/\bPart C\b/.test(clause)) labels.push('Part C');
  const quirks = /\bquirks? (\d+(?:, \d+)*(?:,? and \d+)?)/.exec(clause);
  for (const number of quirks?.[1]?.match(/\d+/g) ?? []) labels.push(`quirk ${number}`);
  return labels;
}

/** The labels docs/protocol.md offers: its section headings and its quirk anchors. */
function offeredSections(markdown: string): Set<string> {
  const offered = new Set<string>();
  for (const match of markdown.matchAll(/^#{2,4} (?:([A-D]\.\d+)|(Part [A-D])) /gm)) {
    offered.add(match[1] ?? match[2]!);
  }
  for (const match of markdown.matchAll(/<a id="quirk-(\d+)"><\/a>/g)) offered.add(`quirk ${match[1]!}`);
  return offered;
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules') return [];
    const path = join(directory, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

describe('citedSections', () => {
  it('reads single sections, lists, ranges and quirks, and stops at the end of the citation', () => {
    expect(citedSections(' A.7):')).toEqual(['A.7']);
    expect(citedSections(' A.0, A.9). Which ones')).toEqual(['A.0', 'A.9']);
    expect(citedSections(' A.1–A.3). */')).toEqual(['A.1', 'A.2', 'A.3']);
    expect(citedSections(' A.2/A.4), and our')).toEqual(['A.2', 'A.4']);
    expect(citedSections(' D.1 and D.2; the full rule tables are in B.9')).toEqual(['D.1', 'D.2']);
    expect(citedSections(' A.0.\n */')).toEqual(['A.0']);
    expect(
      citedSections(' A.8, B.5, D.7, and the loose error bodies of Part C quirks 17, 18\n * and 22). An'),
    ).toEqual(['A.8', 'B.5', 'D.7', 'Part C', 'quirk 17', 'quirk 18', 'quirk 22']);
    expect(citedSections(' Part C quirk 19. |')).toEqual(['Part C', 'quirk 19']);
  });
});

describe('docs/protocol.md', () => {
  const offered = offeredSections(PROTOCOL);

  it('offers the sections of both protocols, their mapping and the quirks', () => {
    for (const label of ['A.0', 'A.7', 'A.9', 'B.4', 'B.5', 'Part C', 'quirk 17', 'quirk 24', 'D.1', 'D.9']) {
      expect(offered, label).toContain(label);
    }
  });

  it('has every section a source comment or page cites', () => {
    const missing: string[] = [];
    let citations = 0;
    const files = ['src', 'test', 'bench', 'docs'].flatMap((area) => filesUnder(join(ROOT, area)));
    for (const file of [...files, join(ROOT, 'README.md')]) {
      if (!statSync(file).isFile()) continue;
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(CITATION)) {
        const labels = citedSections(text.slice(match.index + match[0].length, match.index + 400));
        citations++;
        for (const label of labels) {
          if (!offered.has(label)) missing.push(`${relative(ROOT, file)}: ${label}`);
        }
      }
    }
    expect(citations).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });
});
