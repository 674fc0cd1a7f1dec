import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { walkPages, type PageSource } from '../../../src/catalogue/paginate.ts';

/** Pages keyed by the cursor that asks for them ('' = first page). */
function pagesFrom(pages: Record<string, unknown>): { source: PageSource; asked: (string | undefined)[] } {
  const asked: (string | undefined)[] = [];
  return {
    asked,
    source: async (cursor) => {
      asked.push(cursor);
      const p = pages[cursor ?? ''];
      if (p === undefined) throw new Error('no such page');
      return p;
    },
  };
}

const limits = { maxPages: 10, maxEntries: 100 };

describe('walkPages', () => {
  it('follows nextCursor across pages and concatenates the tools in order', async () => {
    const { source, asked } = pagesFrom({
      '': { tools: [{ name: 'a' }, { name: 'b' }], nextCursor: 'p2' },
      p2: { tools: [{ name: 'c' }], nextCursor: 'p3' },
      p3: { tools: [{ name: 'd' }] },
    });
    const r = await walkPages(source, limits);
    assert.deepEqual(r, { ok: true, entries: [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'd' }], pages: 3 });
    assert.deepEqual(asked, [undefined, 'p2', 'p3']);
  });

  it('treats a null or empty nextCursor as the last page', async () => {
    for (const nextCursor of [null, '']) {
      const r = await walkPages(pagesFrom({ '': { tools: [{ name: 'a' }], nextCursor } }).source, limits);
      assert.deepEqual(r, { ok: true, entries: [{ name: 'a' }], pages: 1 });
    }
  });

  it('passes entries through unjudged, malformed ones included', async () => {
    const r = await walkPages(pagesFrom({ '': { tools: [42, { name: 7 }, null] } }).source, limits);
    assert.deepEqual(r, { ok: true, entries: [42, { name: 7 }, null], pages: 1 });
  });

  it('stops when a cursor repeats, even after several pages', async () => {
    const { source, asked } = pagesFrom({
      '': { tools: [], nextCursor: 'x' },
      x: { tools: [], nextCursor: 'y' },
      y: { tools: [], nextCursor: 'x' },
    });
    assert.deepEqual(await walkPages(source, limits), { ok: false, code: 'cursor_repeated', pages: 3 });
    assert.deepEqual(asked, [undefined, 'x', 'y']);
  });

  it('stops at the page cap when cursors never repeat', async () => {
    let n = 0;
    const r = await walkPages(async () => ({ tools: [], nextCursor: `c${n++}` }), { maxPages: 5, maxEntries: 100 });
    assert.deepEqual(r, { ok: false, code: 'page_cap', pages: 5 });
    assert.equal(n, 5);
  });

  it('stops at the entry cap across pages', async () => {
    const { source } = pagesFrom({ '': { tools: [1, 2, 3], nextCursor: 'n' }, n: { tools: [4, 5, 6] } });
    assert.deepEqual(await walkPages(source, { maxPages: 10, maxEntries: 5 }), {
      ok: false,
      code: 'entry_cap',
      pages: 2,
    });
    assert.equal((await walkPages(source, { maxPages: 10, maxEntries: 6 })).ok, true);
  });

  it('rejects pages of the wrong shape', async () => {
    const bad: unknown[] = [
      null,
      'x',
      [],
      {},
      { tools: {} },
      { tools: [], nextCursor: 5 },
      { tools: [], nextCursor: {} },
    ];
    for (const page of bad) {
      assert.deepEqual(
        await walkPages(async () => page, limits),
        { ok: false, code: 'malformed_page', pages: 1 },
        JSON.stringify(page),
      );
    }
  });

  it('reports a failed request with its error and discards earlier pages', async () => {
    const boom = new Error('down');
    const r = await walkPages(async (c) => {
      if (c === undefined) return { tools: [{ name: 'a' }], nextCursor: 'n' };
      throw boom;
    }, limits);
    assert.deepEqual(r, { ok: false, code: 'request_failed', pages: 1, error: boom });
  });
});
