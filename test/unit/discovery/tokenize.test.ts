import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyze } from '../../../src/discovery/text/analyze.ts';
import { gloss, glossaryFor } from '../../../src/discovery/text/gloss.ts';
import { stem } from '../../../src/discovery/text/stem.ts';
import { compounds, tokenize } from '../../../src/discovery/text/tokenize.ts';

test('identifiers split on every naming convention', () => {
  assert.deepEqual(tokenize('getStockPrice'), ['get', 'stock', 'price']);
  assert.deepEqual(tokenize('get_stock_price'), ['get', 'stock', 'price']);
  assert.deepEqual(tokenize('get-stock-price'), ['get', 'stock', 'price']);
  assert.deepEqual(tokenize('stock.price'), ['stock', 'price']);
  assert.deepEqual(tokenize('HTTPServer'), ['http', 'server']);
  assert.deepEqual(tokenize('XMLHttpRequest'), ['xml', 'http', 'request']);
  assert.deepEqual(tokenize('AI2sql'), ['ai', '2', 'sql']);
  assert.deepEqual(tokenize('PDF&URLTool'), ['pdf', 'url', 'tool']);
});

test('accents fold, unspaced scripts become character pairs', () => {
  assert.deepEqual(tokenize('Naïve Café'), ['naive', 'cafe']);
  assert.deepEqual(tokenize('搜索结果'), ['搜索', '索结', '结果']);
  assert.deepEqual(tokenize('搜'), ['搜']);
});

test('compounds give the glued name forms', () => {
  assert.deepEqual(compounds('ChatOCR'), ['chatocr']);
  assert.deepEqual(compounds('get_stock'), ['get', 'stock', 'getstock']);
});

test('Porter stemmer matches the reference outputs', () => {
  const cases: Record<string, string> = {
    caresses: 'caress',
    ponies: 'poni',
    agreed: 'agre',
    motoring: 'motor',
    hopping: 'hop',
    filing: 'file',
    happy: 'happi',
    relational: 'relat',
    generalizations: 'gener',
    effective: 'effect',
    adoption: 'adopt',
    controll: 'control',
    searching: 'search',
    searches: 'search',
    searched: 'search',
  };
  for (const [word, expected] of Object.entries(cases)) assert.equal(stem(word), expected, word);
  assert.equal(stem('2024'), '2024');
  assert.equal(stem('café'), 'café');
});

test('analyze drops function words and stems the rest', () => {
  assert.deepEqual(analyze('Please search the files for images'), ['search', 'file', 'imag']);
});

test('Chinese prose gets English dictionary glosses, whatever other texts came along', () => {
  const texts = ['查询火车余票', '获取新闻热点'];
  const glossary = glossaryFor(texts);
  assert.ok(analyze(gloss('查询火车余票', glossary)).includes('train'));
  assert.ok(analyze(gloss('获取新闻热点', glossary)).includes(stem('news')));
  for (const t of texts) assert.equal(gloss(t, glossaryFor([t])), gloss(t, glossary));
  assert.equal(gloss('plain English', glossary), '');
  assert.equal(glossaryFor(['plain English']).size, 0);
});
