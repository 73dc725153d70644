/**
 * `deploy/Dockerfile`, checked without Docker: the facts the image promises (multi-stage, a slim Node
 * base, a non-root user, `tpx serve` as the entrypoint, a health check on `/healthz`), that every file
 * it copies exists where it copies it from, and that its runtime stage works: the files of the
 * package as `npm pack` lays them out, with only the production dependencies beside them, started
 * with the image's own entrypoint arguments and probed with the image's own health-check command.
 *
 * What this cannot check is the image build itself (the base image, `npm ci` inside it); see
 * `docs/deploy.md`.
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCKERFILE = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8');

interface Instruction {
  keyword: string;
  /** Everything after the keyword, continuation lines joined. */
  rest: string;
}

interface Stage {
  image: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** The Dockerfile's stages: comments dropped, `\` continuations joined. */
function parseDockerfile(text: string): Stage[] {
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword = '', ...words] = line.split(/\s+/);
    const rest = words.join(' ');
    if (keyword.toUpperCase() === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (match === null) throw new Error(`FROM without an image: ${line}`);
      stages.push({ image: match[1]!, name: match[2], instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) throw new Error(`${keyword} before the first FROM`);
    stage.instructions.push({ keyword: keyword.toUpperCase(), rest });
  }
  return stages;
}

/** The words of an exec-form (JSON array) instruction such as `ENTRYPOINT ["node", "…"]`. */
function execForm(rest: string): string[] {
  const words: unknown = JSON.parse(rest);
  expect(Array.isArray(words) && words.every((word) => typeof word === 'string'), rest).toBe(true);
  return words as string[];
}

/** `COPY [--from=x] a b dest`: the stage copied from (undefined: the build context), sources, target. */
function copies(stage: Stage): { from: string | undefined; sources: string[]; target: string }[] {
  return stage.instructions
    .filter((instruction) => instruction.keyword === 'COPY')
    .map((instruction) => {
      const words = instruction.rest.split(/\s+/);
      const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((word) => !word.startsWith('--'));
      return { from, sources: paths.slice(0, -1), target: paths.at(-1)! };
    });
}

function only(stage: Stage, keyword: string): Instruction {
  const found = stage.instructions.filter((instruction) => instruction.keyword === keyword);
  expect(found, keyword).toHaveLength(1);
  return found[0]!;
}

const stages = parseDockerfile(DOCKERFILE);
const runtime = stages.at(-1)!;
const entrypoint = execForm(only(runtime, 'ENTRYPOINT').rest);
const exposedPort = Number(only(runtime, 'EXPOSE').rest);
/** `HEALTHCHECK [options] CMD [...]`: the command's words. */
const healthCheck = execForm(/\bCMD\s+(\[.*\])$/.exec(only(runtime, 'HEALTHCHECK').rest)?.[1] ?? 'null');

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('deploy/Dockerfile', () => {
  it('builds in one stage and runs from a slim Node base of a supported version in another', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const build = stages[0]!;
    expect(build.name).toBeDefined();
    // The runtime copies the compiled code out of the build stage, not from the build context.
    expect(copies(runtime).every((copy) => copy.from === build.name)).toBe(true);
    const engines = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
    ).engines.node;
    const oldest = Number(/>=\s*(\d+)/.exec(engines)?.[1]);
    for (const stage of stages) {
      const match = /^node:(\d+)-[\w-]*slim$/.exec(stage.image);
      expect(match, stage.image).not.toBeNull();
      expect(Number(match![1])).toBeGreaterThanOrEqual(oldest);
    }
  });

  it('runs as a user other than root', () => {
    const user = only(runtime, 'USER').rest.split(':')[0];
    expect(user).not.toMatch(/^(root|0)$/);
    // USER comes before the entrypoint takes effect: nothing after it switches back.
    const last = runtime.instructions.map((instruction) => instruction.keyword).lastIndexOf('USER');
    expect(runtime.instructions.slice(last + 1).some((instruction) => instruction.keyword === 'USER')).toBe(
      false,
    );
  });

  it('starts tpx serve on the exposed port, beyond loopback, and drains on SIGTERM', () => {
    expect(entrypoint.slice(0, 3)).toEqual(['node', 'dist/cli.js', 'serve']);
    expect(entrypoint[entrypoint.indexOf('--port') + 1]).toBe(String(exposedPort));
    expect(entrypoint[entrypoint.indexOf('--host') + 1]).toBe('0.0.0.0');
    expect(only(runtime, 'STOPSIGNAL').rest).toBe('SIGTERM');
  });

  it('checks its health on /healthz of the port it listens on', () => {
    expect(healthCheck[0]).toBe('node');
    expect(healthCheck.join(' ')).toContain(`http://127.0.0.1:${exposedPort}/healthz`);
  });

  it('copies only files that exist in the build context or come out of the build', () => {
    const build = stages[0]!;
    for (const copy of copies(build)) {
      expect(copy.from).toBeUndefined();
      for (const source of copy.sources) expect(existsSync(join(ROOT, source)), source).toBe(true);
    }
    // What the runtime takes from the build stage: the manifest, the installed dependencies, and what
    // `npm run build` writes (tsconfig.build.json's outDir).
    const outDir = (
      JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
        compilerOptions: { outDir: string };
      }
    ).compilerOptions.outDir;
    const built = copies(runtime).flatMap((copy) => copy.sources.map((source) => relative('/app', source)));
    expect(built.sort()).toEqual(['node_modules', 'package.json', outDir].sort());
    expect(build.instructions.some((instruction) => /npm run build/.test(instruction.rest))).toBe(true);
    expect(build.instructions.some((instruction) => /npm prune --omit=dev/.test(instruction.rest))).toBe(
      true,
    );
  });

  it('runs its entrypoint from the packed files and the production dependencies alone, and passes its own health check', async () => {
    // The files `npm pack` would publish (package.json and dist/, as the runtime stage holds them), and
    // the production dependencies only, as `npm prune --omit=dev` leaves them.
    const [{ stdout: packJson }, { stdout: production }] = await Promise.all([
      run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT }),
      run('npm', ['ls', '--omit=dev', '--parseable', '--all'], { cwd: ROOT }),
    ]);
    const packed = (JSON.parse(packJson) as { files: { path: string }[] }[])[0]!.files.map(
      (file) => file.path,
    );
    expect(packed).toContain('package.json');
    expect(packed).toContain(entrypoint[1]);
    const app = mkdtempSync(join(tmpdir(), 'tpx-image-'));
    cleanups.push(() => rmSync(app, { recursive: true, force: true }));
    for (const path of packed) {
      mkdirSync(dirname(join(app, path)), { recursive: true });
      cpSync(join(ROOT, path), join(app, path));
    }
    const modules = join(ROOT, 'node_modules');
    for (const path of production.split('\n')) {
      const name = relative(modules, path);
      if (path === '' || name.startsWith('..') || name.includes('node_modules')) continue;
      mkdirSync(dirname(join(app, 'node_modules', name)), { recursive: true });
      symlinkSync(path, join(app, 'node_modules', name), 'dir');
    }
    expect(existsSync(join(app, 'node_modules', 'vitest'))).toBe(false);

    // The image's entrypoint, on loopback and a free port for the test (later flags win), with the
    // OpenTelemetry SDK configured so that its lazily loaded packages are loaded too.
    const child = spawn(
      entrypoint[0] === 'node' ? process.execPath : entrypoint[0]!,
      [...entrypoint.slice(1), '--host', '127.0.0.1', '--port', '0'],
      {
        cwd: app,
        env: {
          PATH: process.env['PATH'],
          NODE_ENV: 'production',
          TPX_OAUTH_TOKEN: 'image-token',
          TPX_BASE_URL: 'http://127.0.0.1:9/v1',
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    cleanups.push(() => child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const deadline = Date.now() + 15_000;
    let port: string | undefined;
    while (port === undefined && Date.now() < deadline && child.exitCode === null) {
      port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)?.[1];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(port, stderr).toBeDefined();
    expect(stderr).not.toMatch(/Cannot find (module|package)/);

    // The image's health check, aimed at the port the test got.
    const probe = healthCheck.map((word) => word.replace(`:${exposedPort}/`, `:${port}/`));
    const healthy = await run(process.execPath, probe.slice(1), { cwd: app }).then(
      () => 0,
      (error: { code?: number }) => error.code ?? 1,
    );
    expect(healthy).toBe(0);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // And the same probe fails once nothing answers, so the check above could fail.
    const unhealthy = await run(process.execPath, probe.slice(1), { cwd: app }).then(
      () => 0,
      (error: { code?: number }) => error.code ?? 1,
    );
    expect(unhealthy).toBe(1);
  }, 60_000);
});
