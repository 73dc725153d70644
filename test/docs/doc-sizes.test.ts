/**
 * docs/ is reference for users, not a notebook: every `docs/*.md` stays at most 30 KiB (the mapping
 * reference, `docs/translation.md`, at most 60 KiB), so measurement histories and investigation logs
 * cannot pile up there again. And nothing in the repository points outside it: a clone has no protocol
 * digest beside it and no neighbouring `shared` folder, so a comment or a page citing one sends the reader
 * nowhere. The protocol facts the code relies on are written in `docs/protocol.md`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = join(ROOT, 'docs');
const KIB = 1024;

/** The largest a page may be, in bytes. */
function limitFor(name: string): number {
  return name === 'translation.md' ? 60 * KIB : 30 * KIB;
}

/**
 * References that lead outside the repository: the external protocol digest (written here with an
 * escaped dot, so that replacing its name across the sources leaves this pattern alone) and any relative
 * path into a `shared` folder beside the repository. One place there is not a reference for a reader
 * but a test dependency: the offline llama.cpp build (`realserver/`) that the real-server suite runs,
 * found there or through `TPX_LLAMA_SERVER` (docs/development.md).
 */
const OUTSIDE_REFERENCES: readonly RegExp[] = [/PROTOCOLS\.md/, /\.\.\/shared(?![\w-])(?!\/realserver\b)/];

/** Each line of `text` that points outside the repository, as `<label>:<line>: <text>`. */
export function outsideReferences(label: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    if (OUTSIDE_REFERENCES.some((pattern) => pattern.test(line))) {
      found.push(`${label}:${index + 1}: ${line.trim()}`);
    }
  });
  return found;
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules') return [];
    const path = join(directory, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

const pages = readdirSync(DOCS)
  .filter((name) => name.endsWith('.md'))
  .sort();

describe('the size of docs/', () => {
  it('has pages to measure', () => {
    expect(pages).toContain('translation.md');
    expect(pages.length).toBeGreaterThan(10);
  });

  it.each(pages)('keeps docs/%s within its limit (30 KiB; translation.md 60 KiB)', (name) => {
    const bytes = statSync(join(DOCS, name)).size;
    expect(bytes, `docs/${name} is ${bytes} bytes`).toBeLessThanOrEqual(limitFor(name));
  });
});

describe('references outside the repository', () => {
  it('finds a cited protocol digest and a path into a neighbouring shared folder, not the real-server build', () => {
    // Built from parts, so that this file holds neither reference itself.
    const digest = ['PROTOCOLS', 'md'].join('.');
    const sharedFolder = ['..', 'shared'].join('/');
    const lines = [
      ` * exactly as Anthropic frames its streams (${digest} A.7):`,
      ` * the digest in ${sharedFolder}/protocol/ says so`,
      ' * as written in docs/protocol.md A.7, and a helper in ./shared/ or ../shared-helpers/',
      `const folder = resolve(here, '../../${sharedFolder}/realserver');`,
    ];
    expect(outsideReferences('example.ts', lines.join('\n'))).toEqual([
      `example.ts:1: ${lines[0]!.trim()}`,
      `example.ts:2: ${lines[1]!.trim()}`,
    ]);
  });

  it.each(['src', 'test', 'bench', 'docs', 'README.md'])(
    '%s points nowhere outside the repository',
    (area) => {
      const path = join(ROOT, area);
      const files = statSync(path).isDirectory() ? filesUnder(path) : [path];
      const found = files.flatMap((file) =>
        outsideReferences(relative(ROOT, file), readFileSync(file, 'utf8')),
      );
      expect(found).toEqual([]);
    },
  );
});
