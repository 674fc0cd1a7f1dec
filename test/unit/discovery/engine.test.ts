import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildIndex, DEFAULT_PARAMS, type ToolDoc } from '../../../src/discovery/engine/engine.ts';

const catalogue: ToolDoc[] = [
  {
    name: 'get_stock_price',
    description: 'Get the current stock price for a ticker symbol.',
    inputSchema: { type: 'object', properties: { symbol: { type: 'string' } } },
  },
  {
    name: 'get_weather',
    title: 'Weather',
    description: 'Current weather and forecast for a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'City name' } } },
  },
  {
    name: 'read_file',
    description: 'Read the contents of a file from disk.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  },
  { name: 'write_file', description: 'Write content to a file on disk, creating it if needed.' },
  { name: 'searchWeb', description: 'Search the web and return result pages.' },
  {
    name: 'translateText',
    description: 'Translate text between languages.',
    aliases: ['interpreter'],
    examples: ['say hello in French'],
  },
  { name: 'exchange.rates', description: 'Currency exchange rates and conversions.' },
  { name: 'listPullRequests', description: 'List open pull requests of a GitHub repository.' },
];

test('ranks the obvious tool first and reports matched fields', () => {
  const index = buildIndex(catalogue);
  const r = index.search('what is the weather in Paris', { limit: 3 });
  assert.equal(r.results[0]?.name, 'get_weather');
  assert.deepEqual(r.results[0]?.matched, ['name', 'title', 'description']);
  assert.equal(index.search('stock prices', { limit: 1 }).results[0]?.name, 'get_stock_price');
  assert.equal(index.search('city', { limit: 1 }).results[0]?.matched.includes('schema'), true);
});

test('policy aliases and examples are searchable', () => {
  const index = buildIndex(catalogue);
  assert.deepEqual(
    index.search('interpreter', { limit: 5 }).results.map((h) => h.name),
    ['translateText'],
  );
  assert.deepEqual(index.search('French', { limit: 5 }).results[0]?.matched, ['examples']);
});

test('equal scores break by tool name in code-unit order', () => {
  const twins: ToolDoc[] = ['b_tool', 'B_tool', 'a_tool', 'ä_tool', 'c_tool'].map((name) => ({
    name,
    description: 'same words here',
  }));
  const index = buildIndex([...twins].reverse());
  const r = index.search('same words', { limit: 10 });
  assert.deepEqual(
    r.results.map((h) => h.name),
    ['B_tool', 'a_tool', 'b_tool', 'c_tool', 'ä_tool'],
  );
  assert.equal(new Set(r.results.map((h) => h.score)).size, 1);
  assert.deepEqual(buildIndex(twins).search('same words', { limit: 10 }), r);
});

test('paging: offset and limit slice one stable ranking; total counts all matches', () => {
  const index = buildIndex(catalogue);
  const all = index.search('file disk content', { limit: 100 });
  assert.equal(all.total, all.results.length);
  const page = index.search('file disk content', { limit: 1, offset: 1 });
  assert.deepEqual(page.results, all.results.slice(1, 2));
  assert.equal(page.total, all.total);
  assert.deepEqual(index.search('file', { limit: 0 }).results, []);
});

test('deny before rank: a restricted search equals a search on an index of the allowed tools alone', () => {
  const full = buildIndex(catalogue);
  const allowedNames = ['read_file', 'searchWeb', 'get_weather', 'translateText'];
  const allowed = new Set(allowedNames);
  const alone = buildIndex(catalogue.filter((t) => allowed.has(t.name)));
  for (const q of [
    'read a file',
    'search the web for weather',
    'file',
    'translate weather text',
    'stock',
    'write content to disk',
  ]) {
    const restricted = full.search(q, { limit: 16, allowed });
    assert.deepEqual(restricted, alone.search(q, { limit: 16 }), q);
    assert.deepEqual(full.search(q, { limit: 16, allowed: (n) => allowed.has(n) }), restricted, q);
    for (const h of restricted.results) assert.ok(allowed.has(h.name));
  }
  const throwing = (n: string): boolean => {
    if (n === 'read_file') throw new Error('policy lookup failed');
    return allowed.has(n);
  };
  const failClosed = buildIndex(catalogue.filter((t) => allowed.has(t.name) && t.name !== 'read_file'));
  assert.deepEqual(
    full.search('read a file', { limit: 16, allowed: throwing }),
    failClosed.search('read a file', { limit: 16 }),
  );
  assert.deepEqual(
    full.search('read a file', { limit: 16 }),
    buildIndex(catalogue).search('read a file', { limit: 16 }),
  );
  const reentrant = (n: string): boolean =>
    full.search(n, { limit: 1, allowed: new Set([n]) }).total >= 0 && allowed.has(n);
  assert.deepEqual(
    full.search('read a file', { limit: 16, allowed: reentrant }),
    alone.search('read a file', { limit: 16 }),
  );
  const failing: Iterable<string> = {
    *[Symbol.iterator]() {
      yield 'read_file';
      throw new Error('store went away');
    },
  };
  assert.deepEqual(full.search('read a file', { limit: 16, allowed: failing as ReadonlySet<string> }), {
    results: [],
    total: 0,
  });
  assert.deepEqual(full.search('read a file', { limit: 16, allowed: null as unknown as ReadonlySet<string> }), {
    results: [],
    total: 0,
  });
  assert.deepEqual(full.search('read a file', { limit: 16, allowed }), alone.search('read a file', { limit: 16 }));
  const denied = full.search('stock price', { limit: 16, allowed: new Set(['get_weather']) });
  assert.deepEqual(denied, { results: [], total: 0 });
  assert.deepEqual(full.search('stock price', { limit: 16, allowed: new Set() }), { results: [], total: 0 });
});

test('a new catalogue means a new index; the old one is unchanged', () => {
  const old = buildIndex(catalogue);
  const before = old.search('pull requests', { limit: 5 });
  const next = buildIndex([
    ...catalogue.filter((t) => t.name !== 'listPullRequests'),
    { name: 'merge_request', description: 'Merge a pull request.' },
  ]);
  assert.deepEqual(
    next.search('pull requests', { limit: 5 }).results.map((h) => h.name),
    ['merge_request'],
  );
  assert.deepEqual(old.search('pull requests', { limit: 5 }), before);
  assert.ok(Object.isFrozen(old));
});

test('never throws on hostile queries, options or catalogue entries', () => {
  const odd = [
    { name: 'x', description: 42, inputSchema: { properties: { a: { properties: null } } } },
    null,
    { name: 7 },
    { name: 'y', aliases: 'not-an-array', examples: [1, 'ok'] },
  ] as unknown as ToolDoc[];
  const index = buildIndex([...catalogue, ...odd]);
  const queries = [
    '',
    ' ',
    '\u0000\u0001\u001f',
    'a'.repeat(200_000),
    '🙂🙂 ∑∂',
    '\uD800',
    'the of and',
    'x'.repeat(5) + ' '.repeat(1000),
    Array.from({ length: 5000 }, (_, i) => `w${i}`).join(' '),
    '__proto__ constructor',
    'SELECT * FROM tools;',
  ];
  for (const q of queries) {
    const r = index.search(q, { limit: 16 });
    assert.ok(Array.isArray(r.results) && r.total >= r.results.length);
  }
  assert.deepEqual(index.search('', { limit: 16 }), { results: [], total: 0 });
  for (const limit of [NaN, -1, Infinity, 2.7]) assert.doesNotThrow(() => index.search('file', { limit, offset: NaN }));
  assert.doesNotThrow(() => index.search(undefined as unknown as string, { limit: 5 }));
  assert.deepEqual(buildIndex([]).search('file', { limit: 5 }), { results: [], total: 0 });
});

const library: ToolDoc[] = [
  { name: 'search_books', description: 'Search books by title or author in the library catalogue.' },
  { name: 'library_loans', description: 'Renew library loans and place catalogue holds.' },
  { name: 'play_music', description: 'Play a song or an album.' },
  { name: 'get_weather', description: 'Current weather and forecast for a city.' },
  { name: 'send_email', description: 'Send an email message to a contact.' },
];
const noFeedback = { ...DEFAULT_PARAMS, fbDocs: 0 };

test('feedback: terms of the best tools reach a tool the query never names, without reordering them', () => {
  const plain = buildIndex(library, noFeedback).search('find a novel by its title', { limit: 5 });
  assert.deepEqual(
    plain.results.map((h) => h.name),
    ['search_books'],
  );
  const fed = buildIndex(library).search('find a novel by its title', { limit: 5 });
  assert.deepEqual(
    fed.results.map((h) => h.name),
    ['search_books', 'library_loans'],
  );
  assert.equal(fed.results[0]?.score, plain.results[0]?.score);
  assert.equal(fed.total, 2);
});

test('feedback: a denied tool neither seeds nor receives expansion; restricted equals the allowed tools alone', () => {
  const full = buildIndex(library);
  const allowed = new Set(['library_loans', 'play_music', 'get_weather', 'send_email']);
  const alone = buildIndex(library.filter((t) => allowed.has(t.name)));
  for (const q of ['find a novel by its title', 'library books', 'renew a loan', 'weather for a song', 'catalogue']) {
    assert.deepEqual(full.search(q, { limit: 16, allowed }), alone.search(q, { limit: 16 }), q);
  }
  assert.deepEqual(full.search('find a novel by its title', { limit: 16, allowed }), { results: [], total: 0 });
});

test('an English request finds a tool described in Chinese; glosses respect permissions', () => {
  const tools: ToolDoc[] = [
    { name: 'tool_a', description: '查询火车余票' },
    { name: 'tool_b', description: '获取新闻热点' },
    { name: 'tool_c', description: 'Read the news file from disk.' },
  ];
  const index = buildIndex(tools);
  assert.equal(index.search('train tickets', { limit: 1 }).results[0]?.name, 'tool_a');
  assert.deepEqual(index.search('hot spot', { limit: 5 }).results[0]?.matched, ['description']);
  const allowed = new Set(['tool_a', 'tool_c']);
  const alone = buildIndex(tools.filter((t) => allowed.has(t.name)));
  for (const q of ['train tickets', 'news', 'read a file', '新闻', '火车']) {
    assert.deepEqual(index.search(q, { limit: 16, allowed }), alone.search(q, { limit: 16 }), q);
  }
});
