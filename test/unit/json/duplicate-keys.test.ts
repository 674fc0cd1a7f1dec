import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hasDuplicateKeys } from '../../../src/json/duplicate-keys.ts';
import { foldName } from '../../../src/json/fold-name.ts';
import { corpus } from '../../helpers/testdata.ts';

const { path: PARSING, skip } = corpus('json-parsing');

/** The reference answer: every object's member names, decoded and folded, collected by a reviver-free walk of the raw text. */
function reference(text: string): boolean {
  let duplicate = false;
  const seen: Set<string>[] = [];
  // JSON.parse's reviver sees each object once, after its members; the names
  // of a repeated member are lost by then, so count them from the source instead.
  const tokens = text.match(/"(?:[^"\\]|\\.)*"|[{}[\],:]/g) ?? [];
  const stack: ('object' | 'array')[] = [];
  let expectName = false;
  for (const t of tokens) {
    if (t === '{') {
      stack.push('object');
      seen.push(new Set());
      expectName = true;
    } else if (t === '[') {
      stack.push('array');
    } else if (t === '}' || t === ']') {
      if (stack.pop() === 'object') seen.pop();
    } else if (t === ',') {
      expectName = stack.at(-1) === 'object';
    } else if (t !== ':' && expectName) {
      const name = foldName(JSON.parse(t) as string);
      const names = seen.at(-1) as Set<string>;
      if (names.has(name)) duplicate = true;
      names.add(name);
      expectName = false;
    }
  }
  return duplicate;
}

describe('hasDuplicateKeys', () => {
  it('finds a repeated name at any depth, and compares names as decoded', () => {
    const duplicated = [
      '{"method":"ping","method":"tools/call"}',
      '{"params":{"name":"a","arguments":{"path":"/etc/passwd","path":"/safe"}}}',
      '[1,{"x":[{"a":1,"b":2,"a":3}]}]',
      '{"a":1,"\\u0061":2}',
      '{"é":1,"\\u00e9":2}',
      '{"a\\"b":1,"a\\u0022b":2}',
      '{"":1,"":2}',
      '{"method":"ping","Method":"tools/call"}',
      '{"params":{"name":"a","NAME":"b"}}',
      '{"params":{},"param\\u017f":{}}',
      '{"key":1,"\\u212aey":2}',
      '{"Straße":1,"STRASSE":2}',
      '{"aB":1,"ab":2}',
      '{"AB":1,"Ab":2}',
      '{"__proto__":1,"__proto__":2}',
      '{"__proto__":{"a":1,"a":2}}',
      '{"a" :1,"a"\n\t:2}',
      '{"a\\\\":1,"a\\u005c":2}',
      '[{"x":1},[[{"y":{"z":1,"Z":2}}]]]',
    ];
    for (const text of duplicated) assert.equal(hasDuplicateKeys(text), true, text);
  });

  it('does not count the same name in different objects, values that look like names, or brackets inside strings', () => {
    const clean = [
      '{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}',
      '{"a":"a","b":"a"}',
      '{"a":"{\\"a\\":1,\\"a\\":2}","b":"[,]"}',
      '{"a":[{"b":1},"b",{"b":2}],"b":3}',
      '{ "a" : 1 , "b" : { } , "c" : [ ] }',
      '"a"',
      '[]',
      '{"name":{"Name":1},"other":[{"name":2}]}',
      '{"i":1,"\\u0130":2}',
      '{"A":1,"B":2,"C":{"A":1}}',
      '{"a":"\\":1,\\"a\\":2","b":"x\\\\","c":1}',
      '{"__proto__":{"a":1},"a":{"__proto__":1}}',
    ];
    for (const text of clean) assert.equal(hasDuplicateKeys(text), false, text);
  });

  it('stays linear in an object of many names that fold to other spellings', () => {
    const names = Array.from({ length: 50_000 }, (_, i) => `"Name${i}":${i}`);
    assert.equal(hasDuplicateKeys(`{${names.join(',')}}`), false);
    assert.equal(hasDuplicateKeys(`{${names.join(',')},"NAME7":0}`), true);
  });

  it('agrees with a reference reading on every valid document of the JSON parsing corpus', { skip }, () => {
    let checked = 0;
    for (const f of readdirSync(PARSING).filter((name) => name.endsWith('.json'))) {
      const bytes = readFileSync(join(PARSING, f));
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        JSON.parse(text);
      } catch {
        continue;
      }
      assert.equal(hasDuplicateKeys(text), reference(text), f);
      checked++;
    }
    assert.ok(checked > 90, `only ${checked} documents checked`);
    assert.equal(hasDuplicateKeys(readFileSync(join(PARSING, 'y_object_duplicated_key.json'), 'utf8')), true);
  });
});
