import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { withoutParamsMembers } from '../../../src/json/params-members.ts';

const DROP = new Set(['requestState', 'inputResponses']);
const strip = (text: string) => withoutParamsMembers(Buffer.from(text), DROP).toString('utf8');

describe('withoutParamsMembers', () => {
  it('drops the named members of params wherever they stand, and keeps every other member byte for byte', () => {
    const args = '{ "note" : "é \\" , }", "n":[1, 2.50e1, {"requestState":"inner"}] }';
    assert.equal(
      strip(
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"requestState":"s","name":"t","arguments":${args},"inputResponses":{"a":{"action":"accept"}}}}`,
      ),
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":${args}}}`,
    );
    assert.equal(strip('{"params":{"name":"t", "requestState":"s"}, "id":2}'), '{"params":{"name":"t"}, "id":2}');
    assert.equal(strip('{"params":{"requestState":"s"}}'), '{"params":{}}');
  });

  it('reads escaped member names as JSON does', () => {
    assert.equal(strip('{"params":{"request\\u0053tate":"s","name":"t"}}'), '{"params":{"name":"t"}}');
  });

  it('leaves bodies without those members, or without an object params, as they are (the same buffer)', () => {
    for (const text of [
      '{"params":{"name":"t"}}',
      '{"params":[1]}',
      '{"id":1}',
      '[1]',
      '{"params":{"arguments":{"requestState":1}}}',
    ]) {
      const body = Buffer.from(text);
      assert.equal(withoutParamsMembers(body, DROP), body, text);
    }
  });

  it('agrees with JSON.parse on any params (property)', () => {
    const member = fc.record(
      { name: fc.string(), arguments: fc.jsonValue(), requestState: fc.string(), inputResponses: fc.jsonValue() },
      { requiredKeys: ['name'] },
    );
    fc.assert(
      fc.property(member, fc.jsonValue(), (params, id) => {
        const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }, null, 1));
        const { requestState: _s, inputResponses: _i, ...kept } = params;
        assert.deepEqual(
          JSON.parse(withoutParamsMembers(body, DROP).toString('utf8')).params,
          JSON.parse(JSON.stringify(kept)),
        );
      }),
    );
  });
});
