/**
 * The layer rules of docs/architecture.md, checked by `npm run lint`.
 * A folder of src/ may import only from the folders below it in LAYERS
 * (and from itself); tests and benchmarks may import src, never the reverse.
 */
const LAYERS = [
  ['errors', '^src/errors\\.ts$'],
  ['bounded', '^src/bounded/'],
  ['json', '^src/json/'],
  ['detectors', '^src/detectors/'],
  ['validation', '^src/validation/'],
  ['mcp', '^src/mcp/'],
  ['config', '^src/config/'],
  ['cache', '^src/cache/'],
  ['auth', '^src/auth/'],
  ['telemetry', '^src/telemetry/'],
  ['reload', '^src/reload/'],
  ['grants', '^src/grants/'],
  ['catalogue', '^src/catalogue/'],
  ['results', '^src/results/'],
  ['upstream', '^src/upstream/'],
  ['execution', '^src/execution/'],
  ['discovery', '^src/discovery/'],
  ['approval', '^src/approval/'],
  ['interceptors', '^src/interceptors/'],
  ['pipeline', '^src/pipeline/'],
  ['http', '^src/http/'],
  ['grpc', '^src/grpc/'],
  ['inject', '^src/inject/'],
  ['commands', '^src/commands/'],
  ['modes', '^src/modes/'],
  ['main', '^src/main\\.ts$'],
  ['entry', '^src/(cli\\.ts|warm-compile-cache\\.ts|demo/)'],
];

/** One rule per layer: nothing in it may import a layer above it. */
const upward = LAYERS.slice(0, -1).map(([name, path], i) => ({
  name: `layer-${name}`,
  comment: `${name} sits below ${LAYERS.slice(i + 1)
    .map(([n]) => n)
    .join(', ')} (docs/architecture.md) and must not import them`,
  severity: 'error',
  from: { path },
  to: {
    path: LAYERS.slice(i + 1)
      .map(([, p]) => `(${p})`)
      .join('|'),
  },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'no-cycles',
      comment: 'A cycle means two files are one concern, or a type sits in the wrong layer',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-not-to-tests',
      comment: 'Production code never imports tests, benchmarks or their helpers',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'every-layer-known',
      comment: 'A new folder of src/ needs its place in LAYERS and a paragraph in docs/architecture.md',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map(([, p]) => `(${p})`).join('|') },
      to: {},
    },
    {
      name: 'no-orphans',
      comment: 'A file nothing imports is dead code, unless it is an entry point',
      severity: 'error',
      from: {
        orphan: true,
        pathNot: [
          '\\.d\\.ts$',
          '^src/cli\\.ts$',
          '^src/demo/run\\.ts$',
          '^src/grpc/codegen\\.ts$',
          '^src/grpc/generated/',
          '^(test|bench)/',
        ],
      },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/grpc/generated/' },
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
