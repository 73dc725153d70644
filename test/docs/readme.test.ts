/**
 * The README and docs/ as a user meets them: the README stays a landing page (at most 12 KB), every
 * relative link in it and in docs/ leads to a file and heading that exist, the README's links stay inside
 * what the package ships (so they work from the npm tarball), and "the library in 15 lines" is real code:
 * it is typechecked against the built package's types and run, as an ES module importing `tpx-transport`,
 * against `tpx mock-model` and with no credentials.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
const markdownFiles = [
  README,
  ...readdirSync(DOCS)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(DOCS, name)),
];

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Every `[text](target)` link whose target is relative (not a URL). */
function relativeLinks(file: string): string[] {
  const targets = [...prose(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)].map(
    (match) => match[1]!,
  );
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** The anchors GitHub (and the npm page) gives a file's headings. */
function headingAnchors(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of readFileSync(file, 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const text = match[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[`*_]/g, (character) => (character === '_' ? '_' : ''));
    const slug = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

describe('the README as a landing page', () => {
  it('stays at most 12 KB', () => {
    expect(readFileSync(README).byteLength).toBeLessThanOrEqual(12 * 1024);
  });

  it('says the package is ESM-only and gives the npx form that fetches this package', () => {
    const text = readFileSync(README, 'utf8');
    expect(text).toContain('ESM-only');
    expect(text).toContain('npx -p tpx-transport tpx');
  });

  it('shows how to run the tests as a command to paste, in a shell block', () => {
    const text = readFileSync(README, 'utf8');
    const shellLines = [...text.matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap((block) =>
      block[1]!.split('\n'),
    );
    expect(shellLines.some((line) => /^npm ci && npm test(\s|$)/.test(line))).toBe(true);
  });

  it('has a troubleshooting entry for each error a first hour meets', () => {
    const section = readFileSync(README, 'utf8').split('## Troubleshooting')[1]!.split('\n## ')[0]!;
    for (const cue of [
      'does not serve the model',
      'TPX_MODEL_MAP',
      'has no endpoint',
      '/v1',
      'nothing is listening',
      '--max-tokens',
      '508',
      'ignored: ANTHROPIC_API_KEY is set',
      'no model credentials',
    ]) {
      expect(section, cue).toContain(cue);
    }
  });
});

describe('links', () => {
  it.each(markdownFiles.map((file) => [relative(ROOT, file), file] as const))(
    'every relative link in %s leads to an existing file and heading',
    (_name, file) => {
      const broken: string[] = [];
      for (const link of relativeLinks(file)) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (
          anchor !== undefined &&
          anchor !== '' &&
          target.endsWith('.md') &&
          !headingAnchors(target).has(anchor)
        ) {
          broken.push(`${link}: no heading with that anchor`);
        }
      }
      expect(broken).toEqual([]);
    },
  );

  it("keeps the README's links inside the files the package ships, so they work from the npm tarball", () => {
    const files = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files;
    const shipped = files.filter((entry) => !entry.startsWith('!'));
    const outside = relativeLinks(README)
      .map((link) => link.split('#')[0]!)
      .filter((path) => path !== '')
      .filter((path) => !shipped.some((entry) => path === entry || path.startsWith(`${entry}/`)));
    expect(outside).toEqual([]);
  });
});

describe('the library in 15 lines', () => {
  const section = readFileSync(README, 'utf8').split('## The library in 15 lines')[1]!;
  const snippet = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
  let directory: string;
  let mock: MockModelServer;

  beforeAll(async () => {
    // A project beside nothing but the package itself, installed under its published name.
    directory = mkdtempSync(join(tmpdir(), 'tpx-readme-'));
    mkdirSync(join(directory, 'node_modules'));
    symlinkSync(ROOT, join(directory, 'node_modules', 'tpx-transport'), 'dir');
    writeFileSync(join(directory, 'snippet.mts'), snippet);
    const javascript = ts.transpileModule(snippet, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    writeFileSync(join(directory, 'snippet.mjs'), javascript);
    mock = await startMockModel({ token: 'readme-token' });
  });

  afterAll(async () => {
    await mock?.close();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  function run(
    env: Record<string, string>,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((done) => {
      const child = spawn(process.execPath, [join(directory, 'snippet.mjs')], {
        cwd: directory,
        env: { PATH: process.env['PATH'] ?? '', HOME: directory, ...env },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('close', (code) => {
        clearTimeout(timer);
        done({ code, stdout, stderr });
      });
    });
  }

  it('is at most 15 lines', () => {
    expect(snippet.trimEnd().split('\n').length).toBeLessThanOrEqual(15);
  });

  it("typechecks against the package's published types", { timeout: 90_000 }, () => {
    const program = ts.createProgram([join(directory, 'snippet.mts')], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      // No DOM: the snippet runs on Node, and the smaller library keeps the check quick.
      lib: ['lib.es2022.d.ts'],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules', '@types')],
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  });

  it('streams an answer from an OpenAI-compatible server', async () => {
    const result = await run({ TPX_BASE_URL: mock.url, TPX_OAUTH_TOKEN: 'readme-token' });
    expect(result.stderr).toContain('provider: tpx (');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).not.toBe('');
    expect(mock.requests.some((request) => request.path.endsWith('/chat/completions'))).toBe(true);
  });

  it('prints the typed error and its fix when there are no credentials', async () => {
    const result = await run({});
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('provider: none (');
    expect(result.stderr).toContain('MODEL_EAUTH: no model credentials are configured');
  });
});
