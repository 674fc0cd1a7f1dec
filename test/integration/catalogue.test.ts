import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { z } from 'zod';
import type { Catalogue } from '../../src/catalogue/catalogue.ts';
import { toolDigest } from '../../src/catalogue/digest.ts';
import { CatalogueSync, type CatalogueSyncOptions } from '../../src/catalogue/sync.ts';
import { setLogLevel } from '../../src/telemetry/log.ts';
import { startCatalogueServer, tool, type CatalogueServer } from '../helpers/catalogue-servers.ts';
import { freePort } from '../helpers/ports.ts';
import { startV1Server } from '../helpers/mcp-v1-server.ts';
import { startV2Server } from '../helpers/mcp-v2-server.ts';
import { captureStderr } from '../helpers/stderr.ts';
import { waitFor } from '../helpers/wait.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});
before(() => setLogLevel('error'));
after(() => setLogLevel('info'));

/** A sync whose changes are recorded, closed after the test. */
function syncFor(
  url: string,
  extra: Partial<CatalogueSyncOptions> = {},
): { sync: CatalogueSync; changes: Catalogue[] } {
  const changes: Catalogue[] = [];
  const sync = new CatalogueSync({
    url: new URL(url),
    refreshIntervalMs: 60_000,
    minRefreshGapMs: 0,
    retryBaseMs: 20,
    retryMaxMs: 100,
    onChange: (c) => changes.push(c),
    ...extra,
  });
  cleanups.push(() => sync.close());
  return { sync, changes };
}

async function server(opts: Parameters<typeof startCatalogueServer>[0]): Promise<CatalogueServer> {
  const s = await startCatalogueServer(opts);
  cleanups.push(() => s.close());
  return s;
}

function names(c: Catalogue | undefined): string[] {
  return [...(c?.tools.keys() ?? [])];
}

describe('catalogue sync against real SDK servers', () => {
  it('reads a 2025-11-25 sessionful server over its own session and follows list_changed', async () => {
    const upstream = await startV1Server();
    cleanups.push(() => upstream.close());
    const { sync, changes } = syncFor(upstream.url);
    await sync.start();
    const first = sync.current();
    assert.deepEqual(names(first), ['echo', 'count']);
    assert.equal(sync.stats().era, 'legacy');
    assert.ok(
      upstream.seen.some((r) => typeof r.headers['mcp-session-id'] === 'string'),
      'toolgate used a session',
    );
    const echo = first?.tools.get('echo');
    assert.equal(echo?.tool.description, 'Echo the given text back');
    assert.deepEqual(toolDigest(echo?.tool ?? {}), { ok: true, digest: echo?.digest });

    assert.equal(upstream.sessions.size, 1);
    for (const s of upstream.sessions.values()) {
      s.registerTool('late', { description: 'Registered at runtime', inputSchema: { n: z.number() } }, async () => ({
        content: [],
      }));
    }
    await waitFor(() => changes.length === 2, 'the list_changed refresh');
    assert.deepEqual(names(sync.current()), ['echo', 'count', 'late']);
    assert.notEqual(sync.current()?.digest, first?.digest);
    assert.equal(sync.current()?.tools.get('echo')?.digest, echo?.digest, 'unchanged tools keep their digest');
  });

  it('reads a 2026-07-28 stateless server without a session', async () => {
    const upstream = await startV2Server();
    cleanups.push(() => upstream.close());
    const { sync, changes } = syncFor(upstream.url, { headers: { 'x-upstream-key': 'k1' } });
    await sync.start();
    assert.deepEqual(names(sync.current()), ['echo', 'execute_sql', 'città']);
    assert.equal(sync.stats().era, 'modern');
    assert.equal(changes.length, 1);
    assert.ok(upstream.seen.every((r) => r.headers['mcp-session-id'] === undefined));
    assert.ok(
      upstream.seen.every((r) => r.headers['x-upstream-key'] === 'k1'),
      'configured headers go on every request',
    );
    assert.ok(upstream.seen.some((r) => r.headers['mcp-protocol-version'] === '2026-07-28'));
  });

  for (const era of ['2025', '2026'] as const) {
    it(`walks every page of a paginated ${era} server, in order`, async () => {
      const tools = Array.from({ length: 25 }, (_, i) => tool(`t${String(i).padStart(2, '0')}`));
      const upstream = await server({ era, tools, pageSize: 4 });
      const { sync } = syncFor(upstream.url);
      await sync.start();
      assert.deepEqual(
        names(sync.current()),
        tools.map((t) => t.name),
      );
      assert.deepEqual(upstream.listCalls, [undefined, 'o4', 'o8', 'o12', 'o16', 'o20', 'o24']);
      assert.deepEqual(sync.current()?.tools.get('t07')?.tool, tools[7]);
    });

    it(`refreshes on notifications/tools/list_changed from a ${era} server`, async () => {
      const upstream = await server({ era });
      const { sync, changes } = syncFor(upstream.url);
      await sync.start();
      const before = sync.current();
      upstream.tools = [...upstream.tools, tool('gamma')];
      await upstream.notifyChanged();
      await waitFor(() => changes.length === 2, 'the list_changed refresh');
      assert.deepEqual(names(sync.current()), ['alpha', 'beta', 'gamma']);
      assert.notEqual(sync.current()?.digest, before?.digest);
    });
  }

  it('refreshes on the interval without any notification', async () => {
    const upstream = await server({ era: '2026' });
    const { sync, changes } = syncFor(upstream.url, { refreshIntervalMs: 50 });
    await sync.start();
    upstream.tools = [tool('alpha', { description: 'changed' }), tool('beta')];
    await waitFor(() => changes.length === 2, 'the interval refresh');
    assert.equal(sync.current()?.tools.get('alpha')?.tool.description, 'changed');
    const calls = upstream.listCalls.length;
    await waitFor(() => upstream.listCalls.length >= calls + 2, 'two more interval syncs');
    assert.equal(changes.length, 2, 'an unchanged catalogue does not call onChange');
  });

  it('keeps retrying while the upstream is down at start and resolves once it is up', async () => {
    const port = await freePort();
    const { sync } = syncFor(`http://127.0.0.1:${port}/mcp`);
    let started = false;
    const starting = sync.start().then(() => {
      started = true;
    });
    await waitFor(() => sync.stats().failures >= 3, 'three failed attempts');
    assert.equal(sync.stats().lastFailure, 'net_econnrefused');
    assert.equal(started, false);
    assert.equal(sync.current(), undefined);
    assert.equal(await sync.refresh(), undefined, 'refresh before the first catalogue answers undefined');
    await server({ era: '2025', port });
    await starting;
    assert.deepEqual(names(sync.current()), ['alpha', 'beta']);
    assert.equal(sync.stats().consecutiveFailures, 0);
  });

  for (const era of ['2025', '2026'] as const) {
    it(`keeps the last good catalogue when a refresh fails (${era}), and recovers`, async () => {
      const upstream = await server({ era });
      const { sync, changes } = syncFor(upstream.url);
      await sync.start();
      const good = sync.current();
      upstream.failWith = 503;
      assert.equal(await sync.refresh(), good);
      assert.equal(sync.current(), good);
      assert.equal(sync.stats().failures, 1);
      assert.equal(sync.stats().lastFailure, 'http_503');
      upstream.failWith = undefined;
      upstream.tools = [tool('alpha')];
      const next = await sync.refresh();
      assert.deepEqual(names(next), ['alpha']);
      assert.equal(sync.stats().consecutiveFailures, 0);
      assert.equal(changes.length, 2);
    });
  }

  for (const era of ['2025', '2026'] as const) {
    it(`notices a restarted ${era} upstream without waiting for the interval`, async () => {
      const first = await startCatalogueServer({ era });
      const { sync, changes } = syncFor(first.url);
      await sync.start();
      await first.close();
      const second = await server({ era, port: first.port, tools: [tool('gamma')] });
      await waitFor(() => names(sync.current()).join() === 'gamma', 'the catalogue of the restarted upstream');
      assert.equal(changes.length, 2);
      assert.ok(second.listCalls.length >= 1);
    });
  }

  it('coalesces concurrent refresh() calls into one upstream tools/list', async () => {
    const upstream = await server({ era: '2025' });
    const { sync } = syncFor(upstream.url);
    await sync.start();
    const calls = upstream.listCalls.length;
    upstream.delayMs = 100;
    const results = await Promise.all(Array.from({ length: 10 }, () => sync.refresh()));
    assert.equal(upstream.listCalls.length, calls + 1);
    assert.ok(results.every((r) => r === results[0]));
    assert.notEqual(results[0], undefined);
  });

  it('rate-limits on-demand refreshes so unknown-tool calls cannot hammer the upstream', async () => {
    const upstream = await server({ era: '2026' });
    const { sync } = syncFor(upstream.url, { minRefreshGapMs: 60_000 });
    await sync.start();
    const calls = upstream.listCalls.length;
    upstream.tools = [...upstream.tools, tool('gamma')];
    assert.deepEqual(names(await sync.refresh()), ['alpha', 'beta', 'gamma'], 'the first refresh() asks the upstream');
    assert.equal(upstream.listCalls.length, calls + 1);
    upstream.tools = [tool('alpha')];
    for (let i = 0; i < 20; i++) assert.deepEqual(names(await sync.refresh()), ['alpha', 'beta', 'gamma']);
    assert.equal(upstream.listCalls.length, calls + 1, 'later ones within the gap do not');
  });

  it('runs one more sync when list_changed arrives during a sync', async () => {
    const upstream = await server({ era: '2026' });
    const { sync } = syncFor(upstream.url);
    await sync.start();
    upstream.delayMs = 150;
    const calls = upstream.listCalls.length;
    const refreshing = sync.refresh();
    await waitFor(() => upstream.listCalls.length === calls + 1, 'the refresh to reach the upstream');
    upstream.tools = [...upstream.tools, tool('gamma')];
    await upstream.notifyChanged();
    const stale = await refreshing;
    assert.deepEqual(names(stale), ['alpha', 'beta'], 'the running sync read the list before the change');
    await waitFor(() => names(sync.current()).includes('gamma'), 'the follow-up sync');
    assert.equal(upstream.listCalls.length, calls + 2);
  });

  it('skips malformed and duplicate entries from the wire, counting them without logging content', async () => {
    const upstream = await server({
      era: '2025',
      pageSize: 2,
      tools: [
        tool('alpha'),
        { description: 'SECRET-NO-NAME' },
        tool('alpha', { description: 'SECRET-DUP' }),
        42,
        tool('beta'),
      ],
    });
    const { lines, restore } = captureStderr();
    setLogLevel('info');
    const { sync } = syncFor(upstream.url);
    try {
      await sync.start();
    } finally {
      restore();
      setLogLevel('error');
    }
    assert.deepEqual(names(sync.current()), ['alpha', 'beta']);
    assert.equal(sync.current()?.tools.get('alpha')?.tool.description, 'The alpha tool');
    assert.deepEqual(sync.stats().lastBuild, { listed: 5, kept: 2, malformed: 2, duplicates: 1, undigestable: 0 });
    const skipped = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'catalogue entries skipped');
    assert.deepEqual(
      { ...skipped, time: undefined },
      {
        time: undefined,
        level: 'warn',
        msg: 'catalogue entries skipped',
        malformed: 2,
        duplicates: 1,
        undigestable: 0,
      },
    );
    assert.ok(!lines.join('').includes('SECRET'));
  });

  it('survives an onChange listener that throws', async () => {
    const upstream = await server({ era: '2025' });
    let calls = 0;
    const { sync } = syncFor(upstream.url, {
      onChange: () => {
        calls++;
        throw new Error('listener bug');
      },
    });
    await sync.start();
    upstream.tools = [tool('gamma')];
    assert.deepEqual(names(await sync.refresh()), ['gamma']);
    assert.equal(calls, 2);
  });

  it('start() rejects when close() comes before a first catalogue', async () => {
    const port = await freePort();
    const { sync } = syncFor(`http://127.0.0.1:${port}/mcp`);
    const starting = sync.start();
    await waitFor(() => sync.stats().failures >= 1, 'a failed attempt');
    await sync.close();
    await assert.rejects(starting, /closed before a catalogue was read/);
    assert.equal(await sync.refresh(), undefined);
  });

  it('close() stops all traffic to the upstream', async () => {
    const upstream = await server({ era: '2026' });
    const { sync } = syncFor(upstream.url, { refreshIntervalMs: 20 });
    await sync.start();
    await sync.close();
    const calls = upstream.listCalls.length;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(upstream.listCalls.length, calls);
  });
});
