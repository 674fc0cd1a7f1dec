/**
 * `Expect: 100-continue` in policy mode: the client is told to send its body
 * only after it has authenticated and the declared size is within the limit,
 * so an unauthenticated client never gets a `100 Continue` (real toolgate,
 * raw TCP, so the interim response is seen as sent).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startPolicyGate, type PolicyGate } from '../helpers/policy-gate.ts';
import { rawExchange } from '../helpers/raw.ts';
import { sha256 } from '../helpers/static-keys.ts';

const KEY = 'continue-key-2b4d6f8a0c1e3a5c7e9b';
const BODY = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const head = (fields: string, length = BODY.length) =>
  `POST /mcp HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nexpect: 100-continue\r\ncontent-length: ${length}\r\nconnection: close\r\n${fields}\r\n`;

describe('Expect: 100-continue comes after authentication', () => {
  let setup: PolicyGate;
  before(async () => {
    setup = await startPolicyGate(
      {
        'keys.yaml': `keys:\n  - { sha256: ${sha256(KEY)}, principal: alice, scopes: [docs] }\n`,
        'policy.yaml': 'version: 1\nauthentication:\n  staticKeys: { file: keys.yaml }\ngrants: []\n',
      },
      ['--max-body-bytes', '4096'],
    );
  });
  after(() => setup.close());

  it('without a credential: 401 at once, never 100 Continue, and the body is never asked for', async () => {
    const text = await rawExchange(setup.gate.port, [head('')], 1500);
    assert.match(text, /^HTTP\/1\.1 401 /, text);
    assert.doesNotMatch(text, /100 Continue/);
    assert.match(text, /"code":"unauthenticated"/);
  });

  it('with a wrong credential: the same', async () => {
    const text = await rawExchange(setup.gate.port, [head('authorization: Bearer not-a-key\r\n')], 1500);
    assert.match(text, /^HTTP\/1\.1 401 /, text);
    assert.doesNotMatch(text, /100 Continue/);
  });

  it('authenticated but declaring a body over the limit: 413, never 100 Continue', async () => {
    const text = await rawExchange(setup.gate.port, [head(`authorization: Bearer ${KEY}\r\n`, 10_000)], 1500);
    assert.match(text, /^HTTP\/1\.1 413 /, text);
    assert.doesNotMatch(text, /100 Continue/);
  });

  it('authenticated: 100 Continue, then the body is read and answered', async () => {
    const text = await rawExchange(setup.gate.port, [head(`authorization: Bearer ${KEY}\r\n`), BODY], 3000, 100);
    assert.match(text, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /, text);
  });
});
