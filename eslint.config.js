// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of DESIGN.md, lowest first: a module imports only from its own layer and the ones below.
 * Each entry names the folders a layer must not import from (an upward import fails the lint).
 */
const LAYERS = [
  'protocol',
  'journal',
  'translate',
  'providers',
  'transport',
  'telemetry',
  'server',
  'mock-model',
  'cli',
];
const ABOVE = {
  protocol: ['journal', 'translate', 'providers', 'transport', 'telemetry', 'server', 'mock-model', 'cli'],
  // The journal's format, its reader and its filters: used by the proxy, the mock model and the CLI.
  journal: ['translate', 'providers', 'transport', 'telemetry', 'server', 'mock-model', 'cli'],
  translate: ['providers', 'transport', 'telemetry', 'server', 'mock-model', 'cli'],
  providers: ['transport', 'telemetry', 'server', 'mock-model', 'cli'],
  transport: ['telemetry', 'server', 'mock-model', 'cli'],
  // Telemetry serves the proxy only; the proxy and the mock model stand side by side.
  telemetry: ['server', 'mock-model', 'cli'],
  server: ['mock-model', 'cli'],
  'mock-model': ['telemetry', 'server', 'cli'],
  cli: [],
};

/** `no-restricted-imports` per layer folder; exported so a test can show an upward import fails. */
export const layering = LAYERS.filter((layer) => ABOVE[layer].length > 0).map((layer) => ({
  files: [`src/${layer}/**/*.ts`],
  ignores: ['**/*.test.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: ABOVE[layer].map((above) => `**/${above}/*`),
            message: `src/${layer} is below ${ABOVE[layer].join(', ')} in DESIGN.md's layers: it must not import from them.`,
          },
        ],
      },
    ],
  },
}));

export default tseslint.config(
  // test/e2e/fixtures/ holds executables the tests spawn (a stand-in for Claude Code), plain JavaScript.
  {
    ignores: [
      'dist/',
      'coverage/',
      'node_modules/',
      'bench/results.json',
      'test/e2e/fixtures/',
      '.stryker-tmp*/',
      'reports/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'vitest*.ts', 'bench/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  ...layering,
  {
    files: ['src/errors.ts', 'src/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['./server/*', './cli/*', './cli.js', './telemetry/*', './mock-model/*'],
              message: 'The floor and the library entry load no server, CLI, telemetry or mock model.',
            },
          ],
        },
      ],
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);
