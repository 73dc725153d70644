/**
 * The main entry is the library: its static import graph, read from the build that `npm test` makes
 * first, reaches no server, CLI, logging or telemetry module, and none of their packages.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));

/** Every module a built file loads statically, following relative imports; packages by name. */
function staticImportGraph(entry: string): { files: string[]; packages: string[] } {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (files.has(file)) continue;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    // Static forms only: `import … from 'x'`, `import 'x'`, `export … from 'x'`; `import('x')` is lazy.
    for (const match of source.matchAll(/^\s*(?:import|export)\s+(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
      const specifier = match[1]!;
      if (specifier.startsWith('.')) pending.push(resolve(dirname(file), specifier));
      else
        packages.add(
          specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!,
        );
    }
  }
  return { files: [...files].map((file) => relative(dist, file)).sort(), packages: [...packages].sort() };
}

describe('the main entry tpx-transport', () => {
  const graph = staticImportGraph(resolve(dist, 'index.js'));

  it('loads no server, CLI, telemetry or mock-model module', () => {
    const outside = graph.files.filter((file) => /^(server|cli|telemetry|mock-model)\/|^cli\.js$/.test(file));
    expect(outside).toStrictEqual([]);
    // The graph is read for real: the transport and the translators are in it.
    expect(graph.files).toContain('transport/create-transport.js');
    expect(graph.files).toContain('translate/tool-id-codec.js');
  });

  it('loads no logging, metrics or OpenTelemetry package', () => {
    const telemetry = graph.packages.filter(
      (name) => name === 'pino' || name === 'prom-client' || name.startsWith('@opentelemetry/'),
    );
    expect(telemetry).toStrictEqual([]);
    expect(graph.packages).not.toContain('node:http');
  });

  it('exports the transport and not the proxy, which is at tpx-transport/server', async () => {
    const main: Record<string, unknown> = await import('../../src/index.js');
    const server: Record<string, unknown> = await import('../../src/server/index.js');
    expect(main).toHaveProperty('createTransport');
    expect(main).not.toHaveProperty('startServer');
    expect(typeof server['startServer']).toBe('function');
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    expect(manifest.exports['./server']).toStrictEqual({
      types: './dist/server/index.d.ts',
      import: './dist/server/index.js',
    });
  });
});
