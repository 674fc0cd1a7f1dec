import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { SseInjector } from '../../../src/upstream/sse-injector.ts';

const OURS = Buffer.from('data: {"method":"ours"}\n\n');

/** Collects what the injector writes, standing in for the client response. */
class Collected extends Writable {
  readonly chunks: Buffer[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.chunks.push(chunk);
    done();
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function injector(): { sink: Collected; sse: SseInjector } {
  const sink = new Collected();
  return { sink, sse: new SseInjector(sink as unknown as ServerResponse) };
}

function events(text: string): { id: string | undefined; data: string }[] {
  const out: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => out.push(e) });
  // The parser holds a trailing CR as possibly half of a CRLF; a final LF settles it without adding an event.
  parser.feed(`${text}\n`);
  return out.map((e) => ({ id: e.id, data: e.data }));
}

describe('SSE injector', () => {
  it('writes an added event at once where the stream is between events', () => {
    const { sink, sse } = injector();
    sse.send(OURS);
    sse.write(Buffer.from('id: 1\ndata: a\n\n'));
    sse.send(OURS);
    assert.equal(sink.text(), `${OURS.toString()}id: 1\ndata: a\n\n${OURS.toString()}`);
  });

  it('holds an added event until the upstream event in progress is complete', () => {
    const { sink, sse } = injector();
    sse.write(Buffer.from('id: 1\ndata: first'));
    sse.send(OURS);
    assert.equal(sink.text(), 'id: 1\ndata: first');
    sse.write(Buffer.from(' line\n'));
    assert.equal(sink.text(), 'id: 1\ndata: first line\n', 'one line end is not an event boundary');
    sse.write(Buffer.from('\nid: 2\n'));
    assert.deepEqual(events(sink.text()), [
      { id: '1', data: 'first line' },
      { id: undefined, data: '{"method":"ours"}' },
    ]);
  });

  it('recognises blank lines under CRLF and CR line endings, also split across chunks', () => {
    for (const [chunks, immediate] of [
      [['data: a\r\n\r\n'], true],
      [['data: a\r\r'], true],
      [['data: a\r\n', '\r\n'], true],
      [['data: a\r', '\n'], false],
      [['data: a\n\r'], true],
    ] as const) {
      const { sink, sse } = injector();
      for (const c of chunks) sse.write(Buffer.from(c));
      sse.send(OURS);
      assert.equal(sink.text().endsWith(OURS.toString()), immediate, JSON.stringify(chunks));
    }
  });

  it("drops the upstream's byte order mark when an added event went first, where it would no longer be skipped", () => {
    const { sink, sse } = injector();
    sse.send(OURS);
    sse.write(Buffer.from('\ufeffdata: a\n\n'));
    assert.deepEqual(
      events(sink.text()).map((e) => e.data),
      ['{"method":"ours"}', 'a'],
    );
    const plain = injector();
    plain.sse.write(Buffer.from('\ufeffdata: a\n\n'));
    assert.equal(plain.sink.text(), '\ufeffdata: a\n\n', 'kept where the upstream went first');
  });

  it('queues one copy of an identical event while it waits', () => {
    const { sink, sse } = injector();
    sse.write(Buffer.from('data: x'));
    sse.send(OURS);
    sse.send(OURS);
    sse.write(Buffer.from('\n\n'));
    assert.equal(sink.text(), `data: x\n\n${OURS.toString()}`);
  });

  it('never splits or alters an upstream event, however the stream is chunked (seeded random streams)', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const endings = ['\n', '\r\n', '\r'];
    for (let round = 0; round < 300; round++) {
      const eol = endings[Math.floor(random() * 3)] as string;
      const upstream: string[] = [];
      let text = '';
      for (let e = 0; e < 1 + Math.floor(random() * 5); e++) {
        const data = `event-${round}-${e}`;
        upstream.push(data);
        text += `id: ${e}${eol}data: ${data}${eol}${random() < 0.3 ? `: comment${eol}` : ''}${eol}`;
      }
      const { sink, sse } = injector();
      let sent = 0;
      for (let at = 0; at < text.length;) {
        const size = 1 + Math.floor(random() * 12);
        sse.write(Buffer.from(text.slice(at, at + size)));
        at += size;
        if (random() < 0.4) {
          sse.send(Buffer.from(`data: ours-${sent}\n\n`));
          sent++;
        }
      }
      const seen = events(sink.text()).map((e) => e.data);
      assert.deepEqual(
        seen.filter((d) => d.startsWith('event-')),
        upstream,
        `round ${round}`,
      );
      // Held events are written at the next boundary; identical ones may be merged, distinct ones never lost.
      const ours = seen.filter((d) => d.startsWith('ours-'));
      assert.deepEqual(
        ours,
        [...new Set(ours)].sort((a, b) => Number(a.slice(5)) - Number(b.slice(5))),
        `round ${round}`,
      );
      assert.equal(ours.length, sent, `round ${round}`);
    }
  });

  it('keeps the upstream event ids as the last ids the client saw (added events carry none)', () => {
    const { sink, sse } = injector();
    sse.write(Buffer.from('id: 41\ndata: a\n\n'));
    sse.send(OURS);
    assert.deepEqual(
      events(sink.text()).map((e) => e.id),
      ['41', undefined],
      'a client keeps the last id it was given',
    );
  });
});
