import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventTooLarge, SseEventFilter, type EventJudge } from '../../../src/upstream/sse-event-filter.ts';

function run(chunks: readonly string[], drop: (data: string) => boolean, max = 1024): string {
  return judged(chunks, (d) => (drop(d) ? null : undefined), max);
}

function judged(chunks: readonly string[], judge: EventJudge, max = 1024): string {
  const out: Buffer[] = [];
  const filter = new SseEventFilter(
    judge,
    (c) => {
      out.push(Buffer.from(c));
      return true;
    },
    max,
  );
  for (const c of chunks) filter.write(Buffer.from(c));
  return Buffer.concat(out).toString('utf8');
}

const dropSecret = (data: string) => data.includes('secret');

describe('SseEventFilter', () => {
  it('drops whole events and keeps the others byte for byte, in order', () => {
    const stream = 'id: 1\ndata: {"a":1}\n\nid: 2\ndata: secret\n\n: comment\n\nid: 3\ndata: {"b":2}\n\n';
    assert.equal(run([stream], dropSecret), 'id: 1\ndata: {"a":1}\n\n: comment\n\nid: 3\ndata: {"b":2}\n\n');
  });

  it('judges an event split across chunks at any byte, under every line ending', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const stream = `data: keep${eol}${eol}data: sec${eol}data: ret${eol}${eol}data: tail${eol}${eol}`;
      for (let cut = 1; cut < stream.length; cut++) {
        const out = run([stream.slice(0, cut), stream.slice(cut)], (d) => d.replace('\n', '').includes('secret'));
        assert.ok(!out.includes('sec'), `${JSON.stringify(eol)} cut at ${cut}`);
        assert.ok(out.includes('keep') && out.includes('tail'), `${JSON.stringify(eol)} cut at ${cut}`);
      }
    }
  });

  it('holds an unfinished event until it ends', () => {
    assert.equal(
      run(['data: half'], () => false),
      '',
    );
    assert.equal(
      run(['data: half', '\n\n'], () => false),
      'data: half\n\n',
    );
  });

  it('refuses to hold an event over its bound', () => {
    assert.throws(() => run(['data: ' + 'x'.repeat(100)], () => false, 50), EventTooLarge);
  });

  it('replaces the data of an event it rewrites, keeping its id, its type and its line endings', () => {
    const stream = 'id: 7\r\nevent: message\r\ndata: {"old":\r\ndata: 1}\r\n\r\ndata: keep\n\n';
    const out = judged([stream.slice(0, 20), stream.slice(20)], (d) => (d.startsWith('{') ? '{"new":2}' : undefined));
    assert.equal(out, 'id: 7\nevent: message\ndata: {"new":2}\r\n\r\ndata: keep\n\n');
  });
});
