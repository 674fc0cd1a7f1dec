import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Principal } from '../../../src/auth/types.ts';
import { parsePolicy, type Policy } from '../../../src/config/policy/policy.ts';
import {
  mayListPrompt,
  mayListResource,
  mayListTemplate,
  promptDecision,
  resourceDecision,
} from '../../../src/grants/surfaces.ts';

function policy(text: string): Policy {
  const r = parsePolicy(text);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.policy;
}

const who = (id: string, ...scopes: string[]): Principal => ({
  id,
  scopes: new Set(scopes),
  credentialStrength: 'static',
});
const now = { protocolVersion: undefined, timeMs: Date.now() };
const read = (p: Policy, principal: Principal, uri: string) => {
  const d = resourceDecision(p, principal, uri, now);
  return d === undefined
    ? 'unpoliced'
    : d.audit
      ? `audit ${d.decision.reason}`
      : `${d.decision.effect} ${d.decision.reason}`;
};

const RESOURCES = policy(`
resources:
  grants:
    - { principal: "*", scopes: [docs], uriPrefix: "file:///srv/docs", effect: allow }
    - { principal: "*", scopes: [docs], uriPrefix: "file:///srv/docs/hr/", effect: deny }
    - { principal: carol, uriPrefix: "file:///srv/docs/hr/", effect: allow }
    - { principal: dave, uri: "file:///srv/docs/readme", effect: deny }
    - { principal: "*", scopes: [ops], uri: "file:///srv/ops/runbook", effect: allow, when: 'request.protocolVersion != "bad"' }
    - { principal: "*", scopes: [ops], uri: "file:///srv/ops/secret", effect: allow, when: 'resource.uri.endsWith("x")' }
    - { principal: "*", scopes: [ops], uri: "file:///srv/ops/broken", effect: deny, when: 'principal.claims.missing == "y"' }
    - { principal: "*", scopes: [ops], uri: "file:///srv/ops/broken", effect: allow }
`);

describe('resource grants', () => {
  it('is not policed without a resources section', () => {
    assert.equal(read(policy('version: 1\n'), who('a'), 'file:///x'), 'unpoliced');
    assert.ok(mayListResource(policy('version: 1\n'), who('a'), 'FILE:bad'));
  });

  it('denies what no row allows once the section exists, even empty', () => {
    assert.equal(read(policy('resources: { grants: [] }'), who('a', 'docs'), 'file:///srv/docs/a'), 'deny no_grant');
    assert.equal(read(RESOURCES, who('eve'), 'file:///srv/docs/a'), 'deny no_grant');
  });

  it('lets deny win at a level, and an exact principal row override the * rows', () => {
    assert.equal(read(RESOURCES, who('bob', 'docs'), 'file:///srv/docs/a'), 'allow wildcard_allow');
    assert.equal(read(RESOURCES, who('bob', 'docs'), 'file:///srv/docs/hr/pay'), 'deny wildcard_deny');
    assert.equal(read(RESOURCES, who('carol', 'docs'), 'file:///srv/docs/hr/pay'), 'allow exact_allow');
    assert.equal(read(RESOURCES, who('dave', 'docs'), 'file:///srv/docs/readme'), 'deny exact_deny');
    // An exact row for one URI says nothing of the others: the * rows decide them.
    assert.equal(read(RESOURCES, who('dave', 'docs'), 'file:///srv/docs/guide'), 'allow wildcard_allow');
  });

  it('matches prefixes at a boundary only', () => {
    assert.equal(read(RESOURCES, who('bob', 'docs'), 'file:///srv/docs-private/a'), 'deny no_grant');
    assert.equal(read(RESOURCES, who('bob', 'docs'), 'file:///srv/docs'), 'allow wildcard_allow');
  });

  it('evaluates conditions per read, and a deny that cannot be evaluated refuses', () => {
    assert.equal(read(RESOURCES, who('o', 'ops'), 'file:///srv/ops/runbook'), 'allow wildcard_allow');
    assert.equal(read(RESOURCES, who('o', 'ops'), 'file:///srv/ops/secret'), 'deny no_grant');
    const broken = resourceDecision(RESOURCES, who('o', 'ops'), 'file:///srv/ops/broken', now);
    assert.equal(broken?.decision.effect, 'deny');
    assert.equal(broken?.failed, true);
  });

  it('shadows refusals of a surface in audit mode, and never loosens an enforced deny with an audit row', () => {
    const shadow = policy('resources:\n  enforcement: audit\n  grants: []\n');
    assert.equal(read(shadow, who('a'), 'file:///x'), 'audit no_grant');
    const mixed = policy(`
resources:
  grants:
    - { principal: "*", uriPrefix: "file:///a", effect: allow }
    - { principal: "*", uriPrefix: "file:///a/b", effect: deny }
    - { principal: a, uri: "file:///a/b/c", effect: deny, enforcement: audit }
`);
    assert.equal(read(mixed, who('a'), 'file:///a/b/c'), 'deny wildcard_deny');
    assert.equal(read(mixed, who('a'), 'file:///a/x'), 'allow wildcard_allow');
  });

  it('lists resources as a read decides them, and templates by what they could expand to', () => {
    assert.ok(mayListResource(RESOURCES, who('bob', 'docs'), 'file:///srv/docs/a'));
    assert.ok(!mayListResource(RESOURCES, who('bob', 'docs'), 'file:///srv/docs/hr/a'));
    assert.ok(!mayListResource(RESOURCES, who('o', 'ops'), 'file:///srv/ops/secret'));
    assert.ok(!mayListResource(RESOURCES, who('bob', 'docs'), 'file:///srv/docs/../x'));
    assert.ok(mayListTemplate(RESOURCES, who('bob', 'docs'), 'file:///srv/docs/{path}'));
    assert.ok(mayListTemplate(RESOURCES, who('bob', 'docs'), 'file:///srv/{area}/x'));
    assert.ok(!mayListTemplate(RESOURCES, who('bob', 'docs'), 'file:///srv/docs/hr/{path}'));
    assert.ok(mayListTemplate(RESOURCES, who('carol', 'docs'), 'file:///srv/docs/hr/{path}'));
    assert.ok(!mayListTemplate(RESOURCES, who('eve'), 'file:///srv/docs/{path}'));
    assert.ok(!mayListTemplate(RESOURCES, who('bob', 'docs'), 'file:///etc/{path}'));
  });
});

const PROMPTS = policy(`
prompts:
  grants:
    - { principal: "*", scopes: [p], prompt: greet, effect: allow }
    - { principal: "*", scopes: [p], prompt: report, effect: allow, when: 'prompt.arguments.team == "red"' }
    - { principal: mallory, prompt: greet, effect: deny }
`);

describe('prompt grants', () => {
  const get = (principal: Principal, name: string, args: unknown = {}) =>
    promptDecision(PROMPTS, principal, name, { ...now, arguments: args })?.decision.effect;

  it('decides by name under the same rules', () => {
    assert.equal(get(who('a', 'p'), 'greet'), 'allow');
    assert.equal(get(who('mallory', 'p'), 'greet'), 'deny');
    assert.equal(get(who('a'), 'greet'), 'deny');
    assert.equal(get(who('a', 'p'), 'other'), 'deny');
  });

  it('reads the arguments in conditions, and lists conditional prompts at their best case', () => {
    assert.equal(get(who('a', 'p'), 'report', { team: 'red' }), 'allow');
    assert.equal(get(who('a', 'p'), 'report', { team: 'blue' }), 'deny');
    assert.ok(mayListPrompt(PROMPTS, who('a', 'p'), 'report'));
    assert.ok(!mayListPrompt(PROMPTS, who('mallory', 'p'), 'greet'));
  });

  it('refuses at load a condition reading another surface, and rows naming no or two targets', () => {
    for (const bad of [
      'prompts:\n  grants:\n    - { principal: a, prompt: p, effect: allow, when: "args.x == 1" }\n',
      'resources:\n  grants:\n    - { principal: a, uri: "file:///a", effect: allow, when: "prompt.name == \\"x\\"" }\n',
      'resources:\n  grants:\n    - { principal: a, effect: allow }\n',
      'resources:\n  grants:\n    - { principal: a, uri: "file:///a", uriPrefix: "file:///", effect: allow }\n',
      'resources:\n  grants:\n    - { principal: a, uri: "file:///a/../b", effect: allow }\n',
      'resources:\n  grants:\n    - { principal: a, scopes: [x], uri: "file:///a", effect: allow }\n',
      'prompts:\n  grants:\n    - { principal: a, prompt: p, effect: require_approval }\n',
    ]) {
      assert.equal(parsePolicy(bad).ok, false, bad);
    }
  });
});
