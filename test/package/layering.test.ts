/**
 * The layering of DESIGN.md is enforced by the lint: an import from a layer above fails `npm run lint`.
 * These tests run the project's own layering rules on small sources placed in each folder.
 */
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { layering } from '../../eslint.config.js';

const linter = new Linter({ configType: 'flat' });
const config: Linter.Config[] = [
  { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
  ...layering,
];

/** The layering messages for `source` placed at `file`. */
function layeringErrors(file: string, source: string): string[] {
  return linter
    .verify(source, config, { filename: file })
    .filter((message) => message.ruleId === 'no-restricted-imports')
    .map((message) => message.message);
}

describe('the layering lint', () => {
  it('fails a provider that imports from the server', () => {
    const errors = layeringErrors(
      'src/providers/upward.ts',
      "import { startServer } from '../server/start-server.js';\nexport const s = startServer;\n",
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('src/providers is below');
  });

  it('fails the pure layers importing I/O layers, however deep the path', () => {
    expect(layeringErrors('src/translate/x.ts', "import '../providers/tpx.js';\n")).toHaveLength(1);
    expect(layeringErrors('src/protocol/deep/x.ts', "import '../../transport/session.js';\n")).toHaveLength(
      1,
    );
    expect(layeringErrors('src/transport/x.ts', "import '../telemetry/metrics.js';\n")).toHaveLength(1);
    expect(layeringErrors('src/server/x.ts', "import '../cli/commands.js';\n")).toHaveLength(1);
  });

  it('lets a layer import from the layers below it and from its own folder', () => {
    expect(
      layeringErrors('src/server/x.ts', "import '../transport/session.js';\nimport './auth.js';\n"),
    ).toEqual([]);
    expect(layeringErrors('src/providers/x.ts', "import '../translate/tool-id-codec.js';\n")).toEqual([]);
    // A file whose name merely starts with a layer's name is not that layer.
    expect(layeringErrors('src/providers/x.ts', "import '../translate/server-token-count.js';\n")).toEqual(
      [],
    );
    expect(layeringErrors('src/cli/x.ts', "import '../server/start-server.js';\n")).toEqual([]);
  });
});
