import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import type { DiscoverResponse__Output } from '../../src/grpc/generated/toolgate/v1/DiscoverResponse.ts';
import type { ExplainResponse__Output } from '../../src/grpc/generated/toolgate/v1/ExplainResponse.ts';
import type { ListRowsResponse__Output } from '../../src/grpc/generated/toolgate/v1/ListRowsResponse.ts';
import { startPolicyServer, type PolicyServer } from '../helpers/mcp-policy-server.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { cli } from '../helpers/redis-topologies.ts';
import { startToolgate, type RunningToolgate } from '../helpers/toolgate.ts';
import { startValidator, type ValidatorProcess } from '../helpers/validator-process.ts';
import { grpcClients, refusal, type GrpcClients } from '../unit/grpc/client.ts';
import { sha256 } from '../helpers/static-keys.ts';

const ALICE = 'alice-key-0a9b8c7d6e5f4a3b2c1d';
const ADMIN = 'admin-key-1f2e3d4c5b6a79880716';
const alice = `Bearer ${ALICE}`;
const admin = `Bearer ${ADMIN}`;

const policy = (validator: string) => `
version: 1
authentication:
  staticKeys: { file: keys.yaml }
tools:
  search_docs: { tier: critical, sideEffect: read_only }
  rotate_keys: { securityLevel: elevated }
grants:
  - { principal: "*", tool: search_docs, scopes: [docs], effect: allow }
  - { principal: "*", tool: delete_repo, scopes: [docs], effect: allow }
  - { principal: alice, tool: delete_repo, effect: deny }
  - { principal: "*", tool: rotate_keys, scopes: [docs], effect: allow }
validators:
  - { name: pii, target: "${validator}", hooks: [{ event: tools/call, phase: request }], timeoutMs: 500 }
`;

describe('gRPC API', () => {
  let dir: string;
  let upstream: PolicyServer;
  let validator: ValidatorProcess;
  let redis: RedisServer;
  let gate: RunningToolgate;
  let shared: RunningToolgate;
  let api: GrpcClients;
  let sharedApi: GrpcClients;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-grpc-'));
    [upstream, validator, redis] = await Promise.all([startPolicyServer(), startValidator(), startRedis()]);
    await writeFile(
      join(dir, 'keys.yaml'),
      `keys:\n  - { sha256: ${sha256(ALICE)}, principal: alice, scopes: [docs] }\n  - { sha256: ${sha256(ADMIN)}, principal: ops, scopes: [docs, toolgate.admin] }\n`,
    );
    await writeFile(join(dir, 'policy.yaml'), policy(validator.target));
    const grpc = ['--grpc', 'true', '--grpc-port', '0'];
    [gate, shared] = await Promise.all([
      startToolgate(upstream.origin, ['--policy-file', join(dir, 'policy.yaml'), ...grpc]),
      startToolgate(upstream.origin, [
        '--policy-file',
        join(dir, 'policy.yaml'),
        ...grpc,
        '--redis-url',
        redis.url,
        '--grant-source',
        'redis',
        '--policy-domain',
        'grpc-test',
      ]),
    ]);
    await Promise.all([gate.ready, shared.ready]);
    api = grpcClients(gate.grpcPort as number);
    sharedApi = grpcClients(shared.grpcPort as number);
  });
  after(async () => {
    api.close();
    sharedApi.close();
    await Promise.all([gate.close(), shared.close()]);
    await Promise.all([upstream.close(), validator.close(), redis.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  describe('Health', () => {
    it('Check: SERVING once ready, for the server and each service; unknown services NOT_FOUND; no credential needed', async () => {
      assert.deepEqual(await api.call('Health', 'Check', { service: '' }), { status: 'SERVING' });
      assert.deepEqual(await api.call('Health', 'Check', { service: 'toolgate.v1.GrantAdmin' }), { status: 'SERVING' });
      assert.equal((await refusal(api.call('Health', 'Check', { service: 'nope.Service' }))).code, status.NOT_FOUND);
    });

    it('Watch: streams the current status first', async () => {
      const stream = (
        api.client('Health') as unknown as { Watch(r: object): NodeJS.ReadableStream & { cancel(): void } }
      ).Watch({ service: '' });
      const first = await new Promise((resolve) => stream.once('data', resolve));
      stream.on('error', () => {});
      stream.cancel();
      assert.deepEqual(first, { status: 'SERVING' });
    });
  });

  describe('authentication', () => {
    for (const [label, credential] of [
      ['no credential', undefined],
      ['a bad key', 'Bearer not-a-key-canary-55'],
      ['a malformed header', 'Basic canary-55'],
    ] as const) {
      it(`${label}: UNAUTHENTICATED with the registry code, nothing echoed`, async () => {
        const err = await refusal(
          api.call('PolicyService', 'Explain', { method: 'tools/call', tool: 'search_docs' }, credential),
        );
        assert.equal(err.code, status.UNAUTHENTICATED);
        assert.deepEqual(err.metadata.get('toolgate-code'), ['unauthenticated']);
        assert.ok(!err.details.includes('canary'));
      });
    }
  });

  describe('PolicyService.Explain', () => {
    it('allow: every stage passes, with the row that decided and the revision', async () => {
      const r = await api.call<ExplainResponse__Output>(
        'PolicyService',
        'Explain',
        { method: 'tools/call', tool: 'search_docs', argumentsJson: '{"query":"how"}' },
        alice,
      );
      assert.equal(r.decision, 'allow', JSON.stringify(r.stages));
      assert.deepEqual(
        r.stages.map((s) => [s.name, s.outcome]),
        [
          ['known_tool', 'pass'],
          ['grants', 'pass'],
          ['security_level', 'pass'],
          ['contract_quarantine', 'pass'],
          ['idempotency', 'pass'],
          ['rate_limit', 'pass'],
          ['arguments', 'pass'],
          ['conditions', 'pass'],
          ['approval', 'pass'],
          ['external_validators', 'pass'],
        ],
      );
      assert.equal(r.grantReason, 'wildcard_allow');
      assert.deepEqual(
        r.rows.map((x) => [x.principal, x.tool, x.effect]),
        [['*', 'search_docs', 'allow']],
      );
      assert.ok(r.revision > 0);
      assert.equal(r.principal?.id, 'alice');
      assert.equal(validator.requests.at(-1)?.dryRun, true);
    });

    it('deny: every refusing stage is named, the first decides; argument errors carry pointers, never values', async () => {
      const r = await api.call<ExplainResponse__Output>(
        'PolicyService',
        'Explain',
        { method: 'tools/call', tool: 'rotate_keys', argumentsJson: '{"x":"BLOCK"}' },
        alice,
      );
      assert.equal(r.decision, 'deny');
      assert.deepEqual(r.reasonCodes, ['credential_too_weak', 'validator_denied']);
      const bad = await api.call<ExplainResponse__Output>(
        'PolicyService',
        'Explain',
        { method: 'tools/call', tool: 'search_docs', argumentsJson: '{"query":"","canary-arg":1}' },
        alice,
      );
      assert.deepEqual(bad.reasonCodes, ['invalid_arguments']);
      assert.ok(bad.argumentErrors.length > 0);
      assert.ok(!JSON.stringify(bad).includes('canary-arg":1'));
      const inexact = await api.call<ExplainResponse__Output>(
        'PolicyService',
        'Explain',
        { method: 'tools/call', tool: 'search_docs', argumentsJson: '{"query":"q","limit":900719925474099312}' },
        alice,
      );
      // Read as the MCP path reads it; the hooked validator would judge the rounded number too.
      assert.deepEqual(
        inexact.stages.filter((x) => x.outcome === 'deny').map((x) => [x.name, x.code]),
        [
          ['arguments', 'inexact_number'],
          ['external_validators', 'inexact_number'],
        ],
      );
      assert.deepEqual(
        inexact.argumentErrors.map((e) => [e.instancePath, e.keyword]),
        [['/limit', 'precision']],
      );
    });

    it('an explicit deny row decides for the named principal', async () => {
      const r = await api.call<ExplainResponse__Output>(
        'PolicyService',
        'Explain',
        { method: 'tools/call', tool: 'delete_repo', argumentsJson: '{"repo":"a/b"}' },
        alice,
      );
      assert.equal(r.decision, 'deny');
      assert.equal(r.reasonCodes[0], 'tool_not_granted');
      assert.equal(r.grantReason, 'exact_deny');
      assert.deepEqual(
        r.rows.map((x) => x.principal),
        ['alice'],
      );
    });

    it('for another principal: needs the admin scope', async () => {
      const req = {
        principal: { id: 'bob', scopes: ['docs'] },
        method: 'tools/call',
        tool: 'delete_repo',
        argumentsJson: '{"repo":"a/b"}',
      };
      const err = await refusal(api.call('PolicyService', 'Explain', req, alice));
      assert.equal(err.code, status.PERMISSION_DENIED);
      assert.deepEqual(err.metadata.get('toolgate-code'), ['admin_scope_required']);
      const r = await api.call<ExplainResponse__Output>('PolicyService', 'Explain', req, admin);
      assert.equal(r.decision, 'allow');
      assert.equal(r.principal?.id, 'bob');
    });

    it('for a credential: verified like MCP traffic; a bad one is explained as unauthenticated', async () => {
      const ok = await api.call<ExplainResponse__Output>(
        'PolicyService',
        'Explain',
        { credential: admin, method: 'tools/call', tool: 'delete_repo', argumentsJson: '{"repo":"a/b"}' },
        alice,
      );
      assert.equal(ok.principal?.id, 'ops');
      assert.equal(ok.decision, 'allow');
      const bad = await api.call<ExplainResponse__Output>(
        'PolicyService',
        'Explain',
        { credential: 'Bearer wrong', method: 'tools/call', tool: 'search_docs' },
        alice,
      );
      assert.deepEqual(bad.reasonCodes, ['unauthenticated']);
    });

    it('a dry run: nothing reaches the MCP server; malformed input is INVALID_ARGUMENT', async () => {
      const before = upstream.calls.length;
      await api.call(
        'PolicyService',
        'Explain',
        { method: 'tools/call', tool: 'search_docs', argumentsJson: '{"query":"q"}' },
        alice,
      );
      assert.equal(upstream.calls.length, before);
      const err = await refusal(
        api.call(
          'PolicyService',
          'Explain',
          { method: 'tools/call', tool: 'search_docs', argumentsJson: '{not json canary' },
          alice,
        ),
      );
      assert.equal(err.code, status.INVALID_ARGUMENT);
      assert.ok(!err.details.includes('canary'));
      const twice = await refusal(
        api.call(
          'PolicyService',
          'Explain',
          { method: 'tools/call', tool: 'search_docs', argumentsJson: '{"query":"q","query":"canary"}' },
          alice,
        ),
      );
      assert.equal(twice.code, status.INVALID_ARGUMENT, 'a repeated name is refused, as on the MCP path');
      assert.ok(!twice.details.includes('canary'));
    });
  });

  describe('DiscoveryService.Discover', () => {
    it('ranks only tools the caller may call, without schemas, with policy tier and side effect', async () => {
      const r = await api.call<DiscoverResponse__Output>(
        'DiscoveryService',
        'Discover',
        { query: 'search documentation' },
        alice,
      );
      assert.equal(r.candidates[0]?.name, 'search_docs');
      assert.equal(r.candidates[0]?.tier, 'critical');
      assert.equal(r.candidates[0]?.sideEffect, 'read_only');
      assert.ok((r.candidates[0]?.score ?? 0) > 0);
      assert.ok(r.candidates[0]?.matchReasons.includes('description'));
      assert.equal(r.requestedLimit, 0);
      assert.equal(r.effectiveLimit, 16);
      // search_docs only: delete_repo is denied to alice, weird_schema has no grant, and
      // rotate_keys is elevated, which her static key can never meet.
      assert.equal(r.authorizedCount, 1);
      assert.ok(!r.candidates.some((c) => c.name === 'delete_repo' || c.name === 'rotate_keys'));
      assert.ok(!JSON.stringify(r).includes('inputSchema'));
    });

    it('the input rules of toolgate/discover: limit above 16 or an empty query is INVALID_ARGUMENT', async () => {
      assert.equal(
        (await refusal(api.call('DiscoveryService', 'Discover', { query: 'x', limit: 17 }, alice))).code,
        status.INVALID_ARGUMENT,
      );
      assert.equal(
        (await refusal(api.call('DiscoveryService', 'Discover', { query: '' }, alice))).code,
        status.INVALID_ARGUMENT,
      );
      const one = await api.call<DiscoverResponse__Output>(
        'DiscoveryService',
        'Discover',
        { query: 'keys', limit: 1 },
        alice,
      );
      assert.equal(one.effectiveLimit, 1);
      assert.ok(one.candidates.length <= 1);
    });
  });

  describe('GrantAdmin', () => {
    it('needs the admin scope', async () => {
      const err = await refusal(api.call('GrantAdmin', 'ListRows', {}, alice));
      assert.equal(err.code, status.PERMISSION_DENIED);
    });

    it('with grants from the policy file: lists rows, refuses changes with FAILED_PRECONDITION', async () => {
      const list = await api.call<ListRowsResponse__Output>('GrantAdmin', 'ListRows', { principal: 'alice' }, admin);
      assert.deepEqual(
        list.rows.map((r) => [r.tool, r.effect]),
        [['delete_repo', 'deny']],
      );
      const err = await refusal(
        api.call('GrantAdmin', 'SetRow', { row: { principal: 'bob', tool: 'x', effect: 'allow' } }, admin),
      );
      assert.equal(err.code, status.FAILED_PRECONDITION);
      assert.deepEqual(err.metadata.get('toolgate-code'), ['grants_read_only']);
      assert.match(err.details, /policy file/);
    });

    it('with Redis grants: a require_approval row is written, listed with its rule, and asks for approval; malformed ones are refused', async () => {
      const row = {
        principal: 'alice',
        tool: 'rotate_keys',
        effect: 'require_approval',
        approval: { approverScope: 'keys.approve', expiresInSeconds: 120 },
      };
      const set = await sharedApi.call<{ revision: number; changed: boolean }>('GrantAdmin', 'SetRow', { row }, admin);
      assert.equal(set.changed, true);
      const list = await sharedApi.call<ListRowsResponse__Output>(
        'GrantAdmin',
        'ListRows',
        { tool: 'rotate_keys' },
        admin,
      );
      assert.deepEqual(
        list.rows.map((r) => [
          r.principal,
          r.effect,
          r.approval?.approverScope,
          r.approval?.expiresInSeconds,
          r.approval?.selfApproval,
        ]),
        [['alice', 'require_approval', 'keys.approve', 120, false]],
      );
      let asked = false;
      for (let i = 0; i < 50 && !asked; i++) {
        const r = await sharedApi.call<ExplainResponse__Output>(
          'PolicyService',
          'Explain',
          { method: 'tools/call', tool: 'rotate_keys', argumentsJson: '{}' },
          alice,
        );
        asked = r.stages.some((x) => x.name === 'approval' && x.code === 'approval_required');
        if (!asked) await new Promise((res) => setTimeout(res, 20));
      }
      assert.ok(asked, 'the row read back from Redis asks for approval');
      for (const bad of [
        { principal: 'alice', tool: 'rotate_keys', effect: 'require_approval' },
        { principal: 'alice', tool: 'rotate_keys', effect: 'deny', approval: { approverScope: 'keys.approve' } },
        {
          principal: 'alice',
          tool: 'rotate_keys',
          effect: 'require_approval',
          approval: { approverScope: 'keys.approve', expiresInSeconds: 5 },
        },
      ]) {
        assert.equal(
          (await refusal(sharedApi.call('GrantAdmin', 'SetRow', { row: bad }, admin))).code,
          status.INVALID_ARGUMENT,
          JSON.stringify(bad),
        );
      }
      const gone = await sharedApi.call<{ changed: boolean }>('GrantAdmin', 'DeleteRow', { row }, admin);
      assert.equal(gone.changed, true);
    });

    it('with Redis grants: approving a contract moves the revision in Redis, without a grant change', async () => {
      const before = await sharedApi.call<{ revision: number }>('GrantAdmin', 'GetRevision', {}, admin);
      const approved = await sharedApi.call<{ revision: number }>(
        'ContractService',
        'ApproveContract',
        { tool: 'search_docs' },
        admin,
      );
      assert.equal(approved.revision, before.revision + 1);
      const after = await sharedApi.call<{ revision: number }>('GrantAdmin', 'GetRevision', {}, admin);
      assert.equal(after.revision, approved.revision);
    });

    it('with Redis grants: GrantAdmin writes over the sidecar’s shared connection and opens none of its own', async () => {
      await sharedApi.call('GrantAdmin', 'GetRevision', {}, admin);
      await sharedApi.call('GrantAdmin', 'ListRows', { tool: 'search_docs' }, admin);
      const names = (await cli(redis.port, 'CLIENT', 'LIST'))
        .split('\n')
        .map((line) => /(?:^| )name=(\S*)/.exec(line)?.[1] ?? '')
        .filter((name) => name.startsWith('toolgate'))
        .sort();
      assert.deepEqual(names, ['toolgate-shared', 'toolgate-subscriber']);
    });

    it('with Redis grants: set, list, delete and revision as the CLI does, and the change is in force', async () => {
      const before = await sharedApi.call<{ revision: number }>('GrantAdmin', 'GetRevision', {}, admin);
      const set = await sharedApi.call<{ revision: number; changed: boolean }>(
        'GrantAdmin',
        'SetRow',
        { row: { principal: 'alice', tool: 'search_docs', effect: 'allow' } },
        admin,
      );
      assert.equal(set.revision, before.revision + 1);
      const list = await sharedApi.call<ListRowsResponse__Output>(
        'GrantAdmin',
        'ListRows',
        { tool: 'search_docs' },
        admin,
      );
      assert.deepEqual(
        list.rows.map((r) => [r.principal, r.effect, r.revision]),
        [['alice', 'allow', set.revision]],
      );
      let explained: ExplainResponse__Output | undefined;
      for (let i = 0; i < 50; i++) {
        explained = await sharedApi.call<ExplainResponse__Output>(
          'PolicyService',
          'Explain',
          { method: 'tools/call', tool: 'search_docs', argumentsJson: '{"query":"q"}' },
          alice,
        );
        if (explained.decision === 'allow') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(explained?.decision, 'allow');
      assert.equal(explained?.revision, set.revision);
      const gone = await sharedApi.call<{ revision: number; changed: boolean }>(
        'GrantAdmin',
        'DeleteRow',
        { row: { principal: 'alice', tool: 'search_docs', effect: 'allow' } },
        admin,
      );
      assert.deepEqual(gone, { revision: set.revision + 1, changed: true });
      const again = await sharedApi.call<{ revision: number; changed: boolean }>(
        'GrantAdmin',
        'DeleteRow',
        { row: { principal: 'alice', tool: 'search_docs', effect: 'allow' } },
        admin,
      );
      assert.deepEqual(again, { revision: set.revision + 1, changed: false });
      const bumped = await sharedApi.call<{ revision: number }>('GrantAdmin', 'GetRevision', { bump: true }, admin);
      assert.equal(bumped.revision, set.revision + 2);
      const bad = await refusal(
        sharedApi.call('GrantAdmin', 'SetRow', { row: { principal: 'alice', tool: '*', effect: 'allow' } }, admin),
      );
      assert.equal(bad.code, status.INVALID_ARGUMENT);
    });
  });
});
