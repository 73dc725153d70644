/**
 * A throw-away JavaScript build of `src/` and `bench/` for the child processes, so that `tpx serve`,
 * `tpx mock-model` and the bench's own servers run as plain `node` programs, as a user's installed
 * `tpx` does, rather than through tsx's module hooks (which cost a child a second or two of start-up
 * and stay in the profile of the process being measured).
 *
 * Each file is transpiled on its own with TypeScript's `transpileModule` (no type checking: `tsc` does
 * that) into a fresh directory under the system's temporary directory, with a `node_modules` link back
 * to the repository's and a copy of `package.json` (which makes the files ES modules). Nothing is
 * written inside the repository. The directory is removed when the process exits.
 *
 * @module
 */
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './paths.js';

let built: string | undefined;

function sourceFiles(directory: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '__fixtures__' && entry.name !== 'node_modules') files.push(...sourceFiles(path));
    } else if (
      entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.test.ts') &&
      !entry.name.endsWith('.d.ts')
    ) {
      files.push(path);
    }
  }
  return files;
}

/** Builds once per process; returns the build's root directory (it mirrors the repository's layout). */
export function buildForChildren(): string {
  if (built !== undefined) return built;
  const root = mkdtempSync(join(tmpdir(), 'tpx-bench-build-'));
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  copyFileSync(join(REPO_ROOT, 'package.json'), join(root, 'package.json'));
  const compilerOptions: ts.CompilerOptions = {
    module: ts.ModuleKind.ESNext,
    target: ts.ScriptTarget.ES2022,
    verbatimModuleSyntax: true,
    sourceMap: false,
  };
  // The library, and the bench code that runs in a child: the servers, and the heap measurement with
  // the inputs it imports.
  const roots = ['src', 'bench/servers', 'bench/suites', 'bench/inputs', 'bench/harness'];
  for (const file of roots.flatMap((root) => sourceFiles(join(REPO_ROOT, root)))) {
    const output = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file });
    const target = join(root, relative(REPO_ROOT, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, output.outputText);
  }
  built = root;
  return root;
}
