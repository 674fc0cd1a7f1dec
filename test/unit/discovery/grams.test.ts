import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildIndex, DEFAULT_PARAMS, type ToolDoc } from '../../../src/discovery/engine/engine.ts';
import { eachGram, GramIds } from '../../../src/discovery/engine/grams.ts';

function gramsOf(word: string): (number | string)[] {
  const out: (number | string)[] = [];
  eachGram(word, (key, text) => out.push(text ?? key));
  return out;
}

test('n-grams: a padded word yields its 4-grams, ASCII ones as integers, others as text', () => {
  assert.equal(gramsOf('price').length, 4);
  assert.ok(gramsOf('price').every((k) => typeof k === 'number'));
  assert.deepEqual(gramsOf('ab').length, 1);
  assert.deepEqual(gramsOf('a'), []);
  // The ASCII grams of a word with a wide letter keep the keys they have in an ASCII word.
  assert.deepEqual(gramsOf('pricé').slice(0, 2), gramsOf('price').slice(0, 2));
  assert.deepEqual(gramsOf('pricé').slice(2), ['ricé', 'icé ']);
  assert.deepEqual(
    gramsOf('火车'),
    [' 火车 '].map((s) => s.slice(0, 4)),
  );
  const ids = new GramIds();
  const keys = Array.from({ length: 50_000 }, (_, i) => i * 7919);
  for (const k of keys) assert.equal(ids.add(k, undefined), k / 7919);
  for (const k of keys) assert.equal(ids.get(k, undefined), k / 7919);
  assert.equal(ids.get(1, undefined), undefined);
  assert.equal(ids.get(0, 'x'), undefined);
});

/** Tools whose words share stems and 4-grams ("charger", "charging", "supercharger") in varied proportions. */
function catalogue(n: number): ToolDoc[] {
  const words = [
    'charger',
    'charging',
    'supercharger',
    'station',
    'stations',
    'electric',
    'vehicle',
    'battery',
    'currency',
    'currencies',
    'exchange',
    'rates',
    'weather',
    'forecast',
    'planner',
    'route',
    'routing',
  ];
  return Array.from({ length: n }, (_, i) => {
    const pick = (k: number): string => words[(i * (k + 3) + k * k) % words.length] as string;
    return {
      name: `${pick(0)}_${pick(1)}_${i}`,
      description: `${pick(2)} ${pick(3)} ${pick(4)} for ${pick(5)} ${pick(0)}.`,
    };
  });
}

test('n-gram re-scoring changes the ranking and obeys permissions exactly', () => {
  const tools = catalogue(120);
  const queries = [
    'find a supercharger station',
    'electric vehicle charging',
    'currency exchange rates',
    'route planner for electric vehicles',
    'forecast',
  ];
  const full = buildIndex(tools);
  const plain = buildIndex(tools, { ...DEFAULT_PARAMS, gramWeight: 0 });
  assert.ok(
    queries.some(
      (q) => JSON.stringify(full.search(q, { limit: 16 })) !== JSON.stringify(plain.search(q, { limit: 16 })),
    ),
  );
  // Denied tools hold the same grams in other proportions: counted, they would move idf and scores.
  const allowed = new Set(tools.filter((_, i) => i % 3 === 0).map((t) => t.name));
  const alone = buildIndex(tools.filter((t) => allowed.has(t.name)));
  for (const q of queries) {
    const restricted = full.search(q, { limit: 16, allowed });
    assert.ok(restricted.results.length > 0, q);
    assert.deepEqual(restricted, alone.search(q, { limit: 16 }), q);
    assert.deepEqual(full.search(q, { limit: 16, allowed: (name) => allowed.has(name) }), restricted, q);
  }
});
