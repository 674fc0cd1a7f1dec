import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DETECTOR_IDS, DETECTORS, redactText } from '../../../src/detectors/detectors.ts';
import { es256Jwt, privateKeys, SampleMaker } from '../../helpers/detector-samples.ts';

/** The substrings a detector finds in text. */
function found(id: string, text: string): string[] {
  const detector = DETECTORS.get(id);
  assert.ok(detector, id);
  return detector.find(text).map(([s, e]) => text.slice(s, e));
}

function assertFinds(id: string, value: string, around = (v: string) => `result: ${v}, done`): void {
  assert.deepEqual(found(id, around(value)), [value], `${id} should find ${JSON.stringify(value)}`);
}

function assertIgnores(id: string, text: string): void {
  assert.deepEqual(found(id, text), [], `${id} should ignore ${JSON.stringify(text)}`);
}

const make = new SampleMaker(37);
const NOT_SECRETS = [
  '550e8400-e29b-41d4-a716-446655440000',
  'commit 9fceb02d0ae598e95dc970b74767f19372d61af8',
  'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  'version 1.2.3-beta.4+build.5678',
  '2024-06-01T12:34:56.789Z and 1717245296789',
  'ISBN 978-3-16-148410-0 and 9783161484100',
  'order #100200300400500 shipped',
  'x = n +1; y = a+1234567890',
];

describe('credential detectors', () => {
  it('find tokens in their real formats', () => {
    for (let i = 0; i < 5; i++) {
      assertFinds('aws_access_key', make.awsKey());
      assertFinds('gcp_api_key', make.gcpKey());
      assertFinds('github_token', make.githubClassic());
      assertFinds('github_token', make.githubFineGrained());
      assertFinds('gitlab_token', make.gitlabPat());
      assertFinds('slack_token', make.slackBot());
      assertFinds('npm_token', make.npmToken());
    }
    assertFinds('gitlab_token', 'glpat-Ab3dEf6hIj9kLmN0pQr2sTu5vWx7yZa.01b2c3d4e');
    assertFinds('slack_webhook', make.slackWebhook());
    assertFinds(
      'slack_webhook',
      // oxlint-disable-next-line no-unnecessary-template-expression -- kept in two pieces so secret scanners do not take the fixture for a live webhook
      `hooks.slack.com/workflows/${'T0A1B2C3D/A4E5F6G7H/123456789/Xy9zA8bC7dE6fG5hI4jK3lM2'}`,
    );
  });

  it('do not match a token inside a longer run of its alphabet', () => {
    const key = make.awsKey();
    assertIgnores('aws_access_key', `X${key}`);
    assertIgnores('aws_access_key', `${key}9`);
    assertIgnores('github_token', `my${make.githubClassic()}`);
    assertIgnores('github_token', `${make.githubClassic()}abc`);
    assertIgnores('gcp_api_key', `${make.gcpKey()}-x`);
    assertIgnores('gitlab_token', `${make.gitlabPat()}_more`);
    assertIgnores('npm_token', `x${make.npmToken()}`);
  });

  it('skip placeholders: AWS documentation keys and low-entropy fillers', () => {
    assertIgnores('aws_access_key', 'aws_access_key_id = AKIAIOSFODNN7EXAMPLE');
    assertIgnores('aws_access_key', 'AKIAAAAAAAAAAAAAAAAA');
    assertIgnores('github_token', `ghp_${'x'.repeat(36)}`);
  });

  it('ignore ordinary identifiers, hashes, ids and numbers', () => {
    for (const id of [
      'aws_access_key',
      'gcp_api_key',
      'github_token',
      'gitlab_token',
      'slack_token',
      'slack_webhook',
      'npm_token',
      'private_key',
      'jwt',
    ]) {
      for (const text of NOT_SECRETS) assertIgnores(id, text);
    }
  });
});

describe('private_key', () => {
  it('finds real PEM keys from BEGIN through END', () => {
    for (const pem of privateKeys()) assertFinds('private_key', pem.trimEnd(), (v) => `key:\n${v}\n`);
  });

  it('redacts a block cut off before its END line through its base64 body', () => {
    const pem = privateKeys()[3]!;
    const cut = pem.slice(0, 400);
    assert.deepEqual(found('private_key', cut), [cut]);
  });

  it('ignores public keys, certificates, and armour without a body', () => {
    assertIgnores(
      'private_key',
      '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----',
    );
    assertIgnores('private_key', '-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----');
  });
});

describe('jwt', () => {
  it('finds HMAC and ECDSA signed tokens, and an unsecured one', () => {
    assertFinds('jwt', make.jwt());
    assertFinds('jwt', es256Jwt({ sub: 'alice', exp: 1_900_000_000 }), (v) => `Authorization: Bearer ${v}`);
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`;
    assertFinds('jwt', none, (v) => `token ${v} end`);
  });

  it('does not take a sentence-ending dot into the token, nor accept four parts', () => {
    const token = make.jwt();
    assert.deepEqual(found('jwt', `The token is ${token}.`), [token]);
    assertIgnores('jwt', `${token}.eyJmb28iOjF9`);
  });

  it('ignores dotted base64 whose header is not a JOSE header', () => {
    const notJose = `${Buffer.from('{"typ":"JWT"}').toString('base64url')}.${Buffer.from('{"a":1}').toString('base64url')}.c2ln`;
    assertIgnores('jwt', notJose);
    assertIgnores('jwt', 'eyes.eyebrows.eyelids');
  });
});

describe('payment_card', () => {
  it('finds Luhn-valid numbers of the major schemes, plain, spaced and dashed', () => {
    for (let i = 0; i < 20; i++) assertFinds('payment_card', make.card());
    assertFinds('payment_card', '3782 822463 10005');
    assertFinds('payment_card', '4111-1111-1111-1111');
  });

  it('finds each card of a space-separated list of plain numbers', () => {
    assert.deepEqual(found('payment_card', 'cards 4111111111111111 5555555555554444 on file'), [
      '4111111111111111',
      '5555555555554444',
    ]);
  });

  it('rejects near misses', () => {
    assertIgnores('payment_card', '4111 1111 1111 1112'); // Luhn fails
    assertIgnores('payment_card', '9111111111111111'); // passes Luhn, no scheme starts with 9
    assertIgnores('payment_card', '4111-1111 1111-1111'); // mixed separators
    assertIgnores('payment_card', '41111 1111 1111 111'); // not a card grouping
    assertIgnores('payment_card', 'ID4111111111111111');
    assertIgnores('payment_card', '3.4111111111111111');
    assertIgnores('payment_card', '+4111111111111111');
    assertIgnores('payment_card', '4111111111111111-2222'); // a dash makes one 20-digit number
    for (const text of NOT_SECRETS) assertIgnores('payment_card', text);
  });
});

describe('iban', () => {
  it('finds IBANs with computed check digits, compact and in groups of four', () => {
    for (let i = 0; i < 20; i++) assertFinds('iban', make.iban());
    assertFinds('iban', 'GB82 WEST 1234 5698 7654 32');
    assertFinds('iban', 'DE89370400440532013000');
  });

  it('ends the IBAN at its country length, before a following word', () => {
    assert.deepEqual(found('iban', 'IBAN DE89 3704 0044 0532 0130 00 BIC COBADEFFXXX'), [
      'DE89 3704 0044 0532 0130 00',
    ]);
  });

  it('rejects near misses', () => {
    assertIgnores('iban', 'DE88 3704 0044 0532 0130 00'); // wrong check digits
    assertIgnores('iban', 'DE89370400440532013000X'); // runs on
    assertIgnores('iban', 'XX89370400440532013000'); // no such country
    assertIgnores('iban', 'DE8 93704 0044 0532 0130 00'); // not grouped in fours
    assertIgnores('iban', 'de89370400440532013000');
    for (const text of NOT_SECRETS) assertIgnores('iban', text);
  });
});

describe('email', () => {
  it('finds addresses, trimming a sentence-ending dot', () => {
    for (let i = 0; i < 10; i++) assertFinds('email', make.email());
    assert.deepEqual(found('email', 'Write to ops+alerts@corp.example.io.'), ['ops+alerts@corp.example.io']);
    assert.deepEqual(found('email', '<a@b.co>, "c.d"@e.fr; x@xn--p1ai.xn--p1ai'), ['a@b.co', 'x@xn--p1ai.xn--p1ai']);
  });

  it('does not take a local host, a package version, a scope or a handle for an address', () => {
    assertIgnores('email', 'ssh user@localhost');
    assertIgnores('email', 'npm i react@18.2.0 @types/node@24');
    assertIgnores('email', 'ping @alice, see @scope/pkg');
    assertIgnores('email', 'a..b@example.com');
    assertIgnores('email', `${'a'.repeat(65)}@example.com`);
    for (const text of NOT_SECRETS) assertIgnores('email', text);
  });
});

describe('phone', () => {
  it('finds international numbers of several countries, compact and spaced', () => {
    for (let i = 0; i < 20; i++) assertFinds('phone', make.phone());
    assertFinds('phone', '+390612345678');
  });

  it('ends a spaced number where its country length ends', () => {
    assert.deepEqual(found('phone', 'call +44 20 7946 0958 2024 edition'), ['+44 20 7946 0958']);
  });

  it('rejects arithmetic, offsets, signed amounts and impossible numbers', () => {
    assertIgnores('phone', 'i = i +1; n+12345678901');
    assertIgnores('phone', 'UTC+0530, +05:30');
    assertIgnores('phone', '+1.5% and +3,000,000');
    assertIgnores('phone', '+11234567890'); // NANP area codes do not start with 1
    assertIgnores('phone', '+4420 7946 0958'); // spaced, the code stands alone
    assertIgnores('phone', '+44 020 7946 0958'); // trunk 0 kept
    assertIgnores('phone', '+1234567890123456'); // over 15 digits
    assertIgnores('phone', '+999 1234567'); // unassigned code
    for (const text of NOT_SECRETS) assertIgnores('phone', text);
  });
});

describe('redactText', () => {
  it('returns the very same string and no counts when nothing matches', () => {
    const text = NOT_SECRETS.join('\n');
    const result = redactText(text, DETECTOR_IDS);
    assert.equal(result.text, text);
    assert.ok(Object.is(result.text, text));
    assert.deepEqual(result.counts, {});
  });

  it('writes typed markers and counts each detector', () => {
    const key = make.awsKey();
    const result = redactText(`a ${key} b ${key} c me@mailbox.org`, DETECTOR_IDS);
    assert.equal(result.text, 'a [redacted: aws_access_key] b [redacted: aws_access_key] c [redacted: email]');
    assert.deepEqual(result.counts, { aws_access_key: 2, email: 1 });
  });

  it('runs only the detectors asked for', () => {
    const text = `me@mailbox.org ${make.awsKey()}`;
    assert.equal(redactText(text, ['email']).text, `[redacted: email] ${text.split(' ')[1]}`);
  });

  it('resolves overlaps: the earliest start wins', () => {
    const token = make.jwt();
    const pem = `-----BEGIN PRIVATE KEY-----\n${token}\n-----END PRIVATE KEY-----`;
    const result = redactText(`k ${pem}`, ['jwt', 'private_key']);
    assert.equal(result.text, 'k [redacted: private_key]');
    assert.deepEqual(result.counts, { private_key: 1 });
  });

  it('resolves overlaps: at the same start the longest wins, whichever detector is listed first', () => {
    const key = make.awsKey();
    const text = `from ${key}@mailbox.org`;
    assert.deepEqual(found('aws_access_key', text), [key]);
    for (const ids of [
      ['aws_access_key', 'email'],
      ['email', 'aws_access_key'],
    ]) {
      assert.deepEqual(redactText(text, ids), { text: 'from [redacted: email]', counts: { email: 1 } });
    }
  });

  it('rejects an unknown detector id', () => {
    assert.throws(() => redactText('x', ['nope']), /unknown detector 'nope'/);
  });

  it('has stable snake_case ids and a summary, pattern and source for each', () => {
    for (const id of DETECTOR_IDS) {
      assert.match(id, /^[a-z]+(?:_[a-z0-9]+)*$/);
      const d = DETECTORS.get(id)!;
      assert.equal(d.id, id);
      for (const field of [d.summary, d.pattern, d.source]) assert.ok(field.length > 0, id);
    }
  });
});
