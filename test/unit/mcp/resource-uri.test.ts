import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_URI_LENGTH, templatePrefix, underUriPrefix, uriProblem } from '../../../src/mcp/resource-uri.ts';

describe('resource URIs in normal form', () => {
  it('accepts URIs as servers list them', () => {
    for (const uri of [
      'file:///srv/docs/readme.md',
      'docs://public/readme',
      'https://example.com/a?b=c#d',
      'urn:isbn:0451450523',
      'db://host/t%2Fname',
      'mem://x/%20space',
      'git://h/a%C3%A9',
    ]) {
      assert.equal(uriProblem(uri), undefined, uri);
    }
  });

  it('refuses what a server could read as another URI, saying why', () => {
    const cases: [string, RegExp][] = [
      ['', /1 to/],
      ['x:'.padEnd(MAX_URI_LENGTH + 1, 'a'), /1 to/],
      ['file:///a b', /percent-encode/],
      ['file:///caf\u00e9', /percent-encode/],
      ['file:///a\\..\\b', /percent-encode/],
      ['file:///a\u0000', /percent-encode/],
      ['FILE:///a', /lower-case scheme/],
      ['/relative/path', /lower-case scheme/],
      ['http://Example.com/a', /authority/],
      ['file:///a/%2e%2e/b', /percent escape/],
      ['file:///a/%2E%2E/b', /unreserved/],
      ['file:///%41', /unreserved/],
      ['file:///a%2', /percent escape/],
      ['file:///a%zz', /percent escape/],
      ['file:///docs/../secret', /dot/],
      ['file:///docs/./secret', /dot/],
      ['file:///docs/..', /dot/],
      ['file:///docs/a%2F..%2Fsecret', /dot/],
      ['file:///docs/a%5C..%5Csecret', /dot/],
    ];
    for (const [uri, why] of cases) assert.match(uriProblem(uri) ?? 'accepted', why, JSON.stringify(uri));
  });

  it('keeps query and fragment out of the dot-segment rule, and keeps path case', () => {
    assert.equal(uriProblem('file:///a?x=../b'), undefined);
    assert.equal(uriProblem('file:///a#..'), undefined);
    assert.equal(uriProblem('file:///Docs/README'), undefined);
    assert.equal(uriProblem('file:///a..b/.c'), undefined);
  });

  it('matches a prefix only at a boundary', () => {
    assert.ok(underUriPrefix('file:///docs', 'file:///docs'));
    assert.ok(underUriPrefix('file:///docs/a', 'file:///docs'));
    assert.ok(underUriPrefix('file:///docs?x', 'file:///docs'));
    assert.ok(underUriPrefix('file:///docs#x', 'file:///docs'));
    assert.ok(!underUriPrefix('file:///docs-secret/a', 'file:///docs'));
    assert.ok(underUriPrefix('file:///docs/anything', 'file:///docs/'));
    assert.ok(!underUriPrefix('file:///doc', 'file:///docs'));
    assert.ok(!underUriPrefix('file:///Docs/a', 'file:///docs'));
  });

  it('takes a template literal prefix up to its first expression', () => {
    assert.equal(templatePrefix('docs://public/{name}'), 'docs://public/');
    assert.equal(templatePrefix('docs://a{/b}{?q}'), 'docs://a');
    assert.equal(templatePrefix('docs://fixed'), 'docs://fixed');
  });
});
