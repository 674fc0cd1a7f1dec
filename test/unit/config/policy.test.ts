import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BUILTIN_DEFAULTS, loadPolicyFile, parsePolicy, toolMetadata } from '../../../src/config/policy/policy.ts';
import type { Policy } from '../../../src/config/policy/policy.ts';
import { decide, snapshotFor } from '../../../src/grants/snapshot.ts';

const EXAMPLE = resolve(import.meta.dirname, '../../../examples/policy.yaml');

function ok(text: string): Policy {
  const r = parsePolicy(text);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
  return r.policy;
}

test('the example policy loads, and its grants decide as its comments say', async () => {
  const r = await loadPolicyFile(EXAMPLE);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
  const p = r.policy;
  assert.equal(p.authentication.jwt?.oneTime?.claim, 'toolgate_one_time');
  assert.equal(toolMetadata(p, 'refund_payment').securityLevel, 'strict');
  const d = (id: string, scopes: string[], tool: string) => {
    const s = snapshotFor(p.grants, { id, scopes }, 1);
    assert.ok(s.ok);
    return decide(s.snapshot, tool).reason;
  };
  assert.equal(d('agent-x', [], 'search_tickets'), 'wildcard_allow');
  assert.equal(d('agent-x', ['crm.export', 'contractor'], 'export_customers'), 'wildcard_deny');
  assert.equal(d('agent-triage', ['payments.refund'], 'refund_payment'), 'exact_deny');
  assert.equal(d('agent-reports', [], 'get_ticket'), 'exact_allow');
  assert.equal(d('agent-x', ['tickets.write'], 'update_ticket'), 'no_grant');
  assert.deepEqual(
    p.rateLimits.map((l) => [l.tool, l.burst]),
    [
      ['*', 60],
      ['refund_payment', 20],
    ],
  );
});

test('an empty file is an empty policy with built-in defaults', () => {
  const p = ok('');
  assert.deepEqual(p.grants, []);
  assert.deepEqual(p.defaults, BUILTIN_DEFAULTS);
  assert.equal(p.authentication.anonymous.enabled, false);
  assert.equal(p.authentication.jwt, undefined);
  assert.equal(p.authentication.staticKeys, undefined);
});

test('defaults apply under tool metadata; unknown tools get the defaults', () => {
  const p = ok(`
defaults: {tier: base, timeoutMs: 5000, sideEffect: read_only, maxRetries: 1, maxConcurrent: 4}
tools:
  t1: {tier: critical, requiredScopes: [b, a], resetTimeoutOnProgress: true}
`);
  const t1 = toolMetadata(p, 't1');
  assert.deepEqual(t1, {
    tier: 'critical',
    alwaysInclude: false,
    sideEffect: 'read_only',
    timeoutMs: 5000,
    maxRetries: 1,
    resetTimeoutOnProgress: true,
    idempotency: 'optional',
    maxConcurrent: 4,
    requiredScopes: ['a', 'b'],
    securityLevel: 'standard',
    results: undefined,
    aliases: [],
    examples: [],
  });
  assert.equal(toolMetadata(p, 'unknown').tier, 'base');
  assert.equal(toolMetadata(p, 'toString').tier, 'base');
});

test('a results section takes its fields from the tool, then the defaults; one that asks for nothing is none', () => {
  const p = ok(`
defaults: {results: {maxBytes: 65536, redact: [email, aws_access_key]}}
tools:
  inherits: {}
  marks: {results: {injection: mark, enforcement: audit}}
  unredacted: {results: {redact: []}}
  off: {results: {redact: [], injection: off}}
`);
  assert.deepEqual(toolMetadata(p, 'inherits').results, {
    maxBytes: 65536,
    redact: ['email', 'aws_access_key'],
    injection: 'off',
    enforcement: undefined,
  });
  assert.deepEqual(toolMetadata(p, 'marks').results, {
    maxBytes: 65536,
    redact: ['email', 'aws_access_key'],
    injection: 'mark',
    enforcement: 'audit',
  });
  assert.deepEqual(toolMetadata(p, 'unredacted').results, {
    maxBytes: 65536,
    redact: [],
    injection: 'off',
    enforcement: undefined,
  });
  assert.deepEqual(toolMetadata(p, 'unknown').results, toolMetadata(p, 'inherits').results);
  const bare = ok('tools: {t: {results: {redact: [], injection: off}}}');
  assert.equal(toolMetadata(bare, 't').results, undefined, 'no section: the answer streams through unparsed');
  assert.equal(toolMetadata(p, 'off').results?.maxBytes, 65536);
});

test('a results section naming an unknown detector or a bound past 16 MiB is refused, naming the field', () => {
  for (const [text, path] of [
    ['tools: {t: {results: {redact: [ssn]}}}', '/tools/t/results/redact/0'],
    ['defaults: {results: {maxBytes: 16777217}}', '/defaults/results/maxBytes'],
    ['tools: {t: {results: {injection: quarantine}}}', '/tools/t/results/injection'],
    ['tools: {t: {results: {redcat: [email]}}}', '/tools/t/results/redcat'],
  ] as const) {
    const r = parsePolicy(text);
    assert.equal(r.ok, false, text);
    if (!r.ok)
      assert.ok(
        r.errors.some((e) => e.path === path),
        `${text}: ${JSON.stringify(r.errors)}`,
      );
  }
});

test('the policy is deep-frozen', () => {
  const p = ok(`
tools: {t: {aliases: [x]}}
grants: [{principal: "*", tool: t, effect: allow, scopes: [s]}]
authentication: {jwt: {issuer: i, audience: a, jwksFile: /k.json}, anonymous: {enabled: true, scopes: [p]}}
`);
  for (const o of [
    p,
    p.tools,
    p.tools.t,
    p.tools.t?.aliases,
    p.grants,
    p.grants[0],
    p.grants[0]?.scopes,
    p.authentication,
    p.authentication.jwt,
    p.authentication.jwt?.issuer,
    p.authentication.anonymous.scopes,
    p.defaults,
  ]) {
    assert.ok(Object.isFrozen(o));
  }
  assert.throws(() => {
    (p.grants as unknown[]).push({});
  });
});

test('duplicate identical grant rows combine; allow and deny for the same pair both stay (deny wins)', () => {
  const p = ok(`
grants:
  - {principal: a, tool: t, effect: allow}
  - {principal: a, tool: t, effect: allow}
  - {principal: "*", tool: t, effect: allow, scopes: [y, x]}
  - {principal: "*", tool: t, effect: allow, scopes: [x, y]}
  - {principal: a, tool: t, effect: deny}
`);
  assert.equal(p.grants.length, 3);
  const s = snapshotFor(p.grants, { id: 'a', scopes: [] }, 1);
  assert.ok(s.ok);
  assert.equal(decide(s.snapshot, 't').reason, 'exact_deny');
});

test('a tool named __proto__ is an ordinary tool', () => {
  const p = ok('tools: {__proto__: {tier: critical}}');
  assert.equal(toolMetadata(p, '__proto__').tier, 'critical');
  assert.equal(toolMetadata(p, 'other').tier, 'onDemand');
});

test('relative file paths resolve against the policy file directory; JSON policies load', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tg-policy-'));
  const file = join(dir, 'policy.json');
  await writeFile(
    file,
    JSON.stringify({
      authentication: {
        staticKeys: { file: 'keys/keys.yaml' },
        jwt: { issuer: 'i', audience: 'a', jwksFile: '/abs/jwks.json' },
      },
    }),
  );
  const r = await loadPolicyFile(file);
  assert.ok(r.ok);
  assert.equal(r.policy.authentication.staticKeys?.file, join(dir, 'keys/keys.yaml'));
  assert.equal(r.policy.authentication.jwt?.jwksFile, '/abs/jwks.json');
  assert.deepEqual(r.policy.authentication.jwt?.issuer, ['i']);
  assert.equal(r.policy.authentication.jwt?.clockSkewSeconds, 30);
});

test('an unreadable file is reported by errno only', async () => {
  const r = await loadPolicyFile('/nonexistent/toolgate/policy.yaml');
  assert.deepEqual(r, { ok: false, errors: [{ path: '', message: 'read: cannot read the policy file (ENOENT)' }] });
});

test('the source digest tells content changes apart', async () => {
  const text = await readFile(EXAMPLE, 'utf8');
  assert.equal(ok(text).sourceDigest, ok(text).sourceDigest);
  assert.notEqual(ok(text).sourceDigest, ok(`${text}\n# edited\n`).sourceDigest);
});

const invalid: [string, string, string, RegExp][] = [
  ['unknown top-level key', 'grant: []', '/grant', /additionalProperties/],
  ['unknown key in a tool', 'tools: {t: {teir: base}}', '/tools/t/teir', /additionalProperties/],
  [
    'unknown key in a grant',
    'grants: [{principal: a, tool: t, effect: allow, role: admin}]',
    '/grants/0/role',
    /additionalProperties/,
  ],
  ['bad tier', 'tools: {t: {tier: top}}', '/tools/t/tier', /enum/],
  ['bad effect', 'grants: [{principal: a, tool: t, effect: permit}]', '/grants/0/effect', /enum/],
  ['missing effect', 'grants: [{principal: a, tool: t}]', '/grants/0/effect', /required/],
  ['wildcard tool in a grant', 'grants: [{principal: a, tool: "*", effect: allow}]', '/grants/0/tool', /not/],
  ['wildcard tool name', 'tools: {"*": {}}', '/tools/*', /./],
  [
    'scopes on an exact-principal row',
    'grants: [{principal: a, tool: t, effect: allow, scopes: [x]}]',
    '/grants/0/scopes',
    /only principal "\*" rows/,
  ],
  [
    'scope with a quote',
    'grants: [{principal: "*", tool: t, effect: allow, scopes: [\'a"b\']}]',
    '/grants/0/scopes/0',
    /pattern/,
  ],
  [
    'negative revision',
    'grants: [{principal: a, tool: t, effect: allow, revision: -1}]',
    '/grants/0/revision',
    /minimum/,
  ],
  ['timeout zero', 'tools: {t: {timeoutMs: 0}}', '/tools/t/timeoutMs', /minimum/],
  ['retries on a non-idempotent tool', 'tools: {t: {maxRetries: 2}}', '/tools/t/maxRetries', /non_idempotent_write/],
  [
    'retries in defaults with the default side effect',
    'defaults: {maxRetries: 1}',
    '/defaults/maxRetries',
    /non_idempotent_write/,
  ],
  [
    'idempotency required on a tool that may repeat anyway',
    'tools: {t: {sideEffect: idempotent_write, idempotency: required}}',
    '/tools/t/idempotency',
    /non_idempotent_write tools only/,
  ],
  [
    'retries on a non-idempotent tool whose key is only optional',
    'tools: {t: {idempotency: optional, maxRetries: 1}}',
    '/tools/t/maxRetries',
    /idempotency: required/,
  ],
  [
    'retries inherited onto a tool declared non-idempotent',
    'defaults: {maxRetries: 1, sideEffect: read_only}\ntools: {t: {sideEffect: non_idempotent_write}}',
    '/tools/t/maxRetries',
    /non_idempotent_write/,
  ],
  [
    'both jwksFile and jwksUrl',
    'authentication: {jwt: {issuer: i, audience: a, jwksFile: /f, jwksUrl: "https://x/"}}',
    '/authentication/jwt',
    /exactly one/,
  ],
  [
    'neither jwksFile nor jwksUrl',
    'authentication: {jwt: {issuer: i, audience: a}}',
    '/authentication/jwt',
    /exactly one/,
  ],
  [
    'HS256 with a published JWKS URL',
    'authentication: {jwt: {issuer: i, audience: a, jwksUrl: "https://x/", algorithms: [HS256]}}',
    '/authentication/jwt/algorithms',
    /HS/,
  ],
  [
    'alg none',
    'authentication: {jwt: {issuer: i, audience: a, jwksFile: /f, algorithms: [none]}}',
    '/authentication/jwt/algorithms/0',
    /enum/,
  ],
  [
    'one-time without a marking',
    'authentication: {jwt: {issuer: i, audience: a, jwksFile: /f, oneTime: {}}}',
    '/authentication/jwt/oneTime',
    /issuers, claim/,
  ],
  ['missing issuer', 'authentication: {jwt: {audience: a, jwksFile: /f}}', '/authentication/jwt/issuer', /required/],
  [
    'anonymous with a non-boolean',
    'authentication: {anonymous: {enabled: "yes"}}',
    '/authentication/anonymous/enabled',
    /type/,
  ],
  [
    'YAML 1.1 boolean is a string here',
    'authentication: {anonymous: {enabled: yes}}',
    '/authentication/anonymous/enabled',
    /type/,
  ],
  [
    'resource metadata URL with a quote',
    "authentication: {resourceMetadataUrl: 'https://x/\"y'}",
    '/authentication/resourceMetadataUrl',
    /pattern/,
  ],
  [
    'resource metadata URL with credentials',
    'authentication: {resourceMetadataUrl: "https://u:p@x/"}',
    '/authentication/resourceMetadataUrl',
    /url/,
  ],
  [
    'skew out of range',
    'authentication: {jwt: {issuer: i, audience: a, jwksFile: /f, clockSkewSeconds: 3600}}',
    '/authentication/jwt/clockSkewSeconds',
    /maximum/,
  ],
  ['wrong version', 'version: 2', '/version', /const/],
  ['document is a list', '- a', '', /type/],
];
for (const [name, text, path, message] of invalid) {
  test(`invalid policy: ${name} → ${path || '(root)'}`, () => {
    const r = parsePolicy(text);
    assert.equal(r.ok, false);
    assert.ok(
      !r.ok && r.errors.some((e) => e.path === path && message.test(e.message)),
      JSON.stringify(!r.ok && r.errors),
    );
  });
}

test('all errors are reported at once', () => {
  const r = parsePolicy('tools: {t: {tier: x, timeoutMs: -1}}\ngrants: [{principal: a, tool: t, effect: maybe}]');
  assert.ok(!r.ok);
  assert.deepEqual(r.errors.map((e) => e.path).sort(), ['/grants/0/effect', '/tools/t/tier', '/tools/t/timeoutMs']);
});

test('YAML errors name line and column, never echo the text; duplicate keys are refused', () => {
  const secret = 'hunter2-do-not-echo';
  const bad = parsePolicy(`tools:\n  t: {tier: "${secret}\n`);
  assert.ok(!bad.ok);
  assert.doesNotMatch(JSON.stringify(bad), new RegExp(secret));
  assert.match(bad.errors[0]?.message ?? '', /^YAML .* at line \d+, column \d+$/);
  const dup = parsePolicy('tools:\n  t: {tier: base}\n  t: {tier: critical}\n');
  assert.ok(!dup.ok);
  assert.match(dup.errors[0]?.message ?? '', /duplicate_key/);
});

test('schema errors never echo the rejected value', () => {
  const secret = 'sk_live_SECRET_VALUE';
  const r = parsePolicy(
    `authentication: {staticKeys: {file: 5, apiKeyHeader: "${secret}"}, resourceMetadataUrl: "${secret}"}`,
  );
  assert.ok(!r.ok);
  assert.doesNotMatch(JSON.stringify(r), /SECRET/);
});

test('alias expansion bombs are refused', () => {
  const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 12; i++)
    lines.push(
      `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [*${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}]`,
    );
  const r = parsePolicy(lines.join('\n'));
  assert.equal(r.ok, false);
});

test('the worked example in docs/policy.md decides as the table says', async () => {
  const doc = await readFile(resolve(import.meta.dirname, '../../../docs/policy.md'), 'utf8');
  const yaml = doc.split('### Worked example')[1]?.split('```yaml')[1]?.split('```')[0];
  assert.ok(yaml);
  const p = ok(yaml);
  const d = (id: string, scopes: string[]) => {
    const s = snapshotFor(p.grants, { id, scopes }, 1);
    assert.ok(s.ok);
    return decide(s.snapshot, 'export_customers').reason;
  };
  assert.equal(d('agent-a', ['crm.export']), 'wildcard_allow');
  assert.equal(d('agent-b', []), 'no_grant');
  assert.equal(d('agent-c', ['crm.export', 'contractor']), 'wildcard_deny');
  assert.equal(d('agent-audit', ['contractor']), 'exact_allow');
  assert.equal(d('agent-old', ['crm.export', 'contractor', 'admin']), 'exact_deny');
});

test('a tool timeout exists only where the policy sets one; otherwise the process setting applies', () => {
  const none = ok('version: 1\ntools: {a: {tier: base}}\n');
  assert.equal(toolMetadata(none, 'a').timeoutMs, undefined);
  assert.equal(toolMetadata(none, 'unlisted').timeoutMs, undefined);
  const set = ok('version: 1\ndefaults: {timeoutMs: 4000}\ntools: {a: {timeoutMs: 250}, b: {tier: base}}\n');
  assert.equal(toolMetadata(set, 'a').timeoutMs, 250);
  assert.equal(toolMetadata(set, 'b').timeoutMs, 4000);
});
