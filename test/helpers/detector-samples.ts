import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { mulberry32 } from './prng.ts';

/**
 * Deterministic true positives for the result-guard detectors, made in the
 * real formats (checksums computed, keys and tokens really generated), so
 * the corpus test can count recall without shipping anything secret.
 */

const DIGITS = '0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const BASE62 = `${DIGITS}${UPPER}abcdefghijklmnopqrstuvwxyz`;

export class SampleMaker {
  readonly #random: () => number;
  constructor(seed: number) {
    this.#random = mulberry32(seed);
  }

  int(n: number): number {
    return Math.floor(this.#random() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  chars(alphabet: string, n: number): string {
    return Array.from({ length: n }, () => alphabet[this.int(alphabet.length)]).join('');
  }

  /** A number with the given prefix and length whose last digit makes the Luhn check pass. */
  luhnNumber(prefix: string, length: number): string {
    const body = prefix + this.chars(DIGITS, length - prefix.length - 1);
    for (let d = 0; d < 10; d++) if (luhn(body + d)) return body + d;
    throw new Error('unreachable: one check digit always fits');
  }

  card(): string {
    const [prefix, length] = this.pick([
      ['4', 16],
      ['4', 13],
      ['51', 16],
      ['55', 16],
      ['2221', 16],
      ['2720', 16],
      ['34', 15],
      ['37', 15],
      ['6011', 16],
      ['65', 16],
    ] as const);
    const n = this.luhnNumber(prefix, length);
    const sep = this.pick(['', ' ', '-']);
    if (sep === '') return n;
    if (length === 15) return [n.slice(0, 4), n.slice(4, 10), n.slice(10)].join(sep);
    if (length === 13) return [n.slice(0, 4), n.slice(4, 7), n.slice(7, 10), n.slice(10)].join(sep);
    return (n.match(/.{1,4}/g) ?? []).join(sep);
  }

  iban(): string {
    const [cc, bban] = this.pick([
      ['DE', () => this.chars(DIGITS, 18)],
      ['GB', () => this.chars(UPPER, 4) + this.chars(DIGITS, 14)],
      ['FR', () => this.chars(DIGITS, 23)],
      ['NL', () => this.chars(UPPER, 4) + this.chars(DIGITS, 10)],
      ['ES', () => this.chars(DIGITS, 20)],
      ['IT', () => this.chars(UPPER, 1) + this.chars(DIGITS, 22)],
      ['CH', () => this.chars(DIGITS, 17)],
      ['BE', () => this.chars(DIGITS, 12)],
      ['NO', () => this.chars(DIGITS, 11)],
      ['PL', () => this.chars(DIGITS, 24)],
    ] as const);
    const b = bban();
    const check = String(98 - mod97(b + cc + '00')).padStart(2, '0');
    const compact = cc + check + b;
    return this.int(2) === 0 ? compact : (compact.match(/.{1,4}/g) ?? []).join(' ');
  }

  /** A classic GitHub token: prefix, 30 random base62 characters, then their CRC32 in 6 base62 characters. */
  githubClassic(): string {
    const random = this.chars(BASE62, 30);
    let crc = crc32(random);
    let check = '';
    for (let i = 0; i < 6; i++, crc = Math.floor(crc / 62)) check = BASE62[crc % 62] + check;
    return `${this.pick(['ghp', 'gho', 'ghu', 'ghs', 'ghr'])}_${random}${check}`;
  }

  githubFineGrained(): string {
    return `github_pat_${this.chars(BASE62, 22)}_${this.chars(BASE62, 59)}`;
  }

  awsKey(): string {
    return this.pick(['AKIA', 'ASIA']) + this.chars(`${UPPER}234567`, 16);
  }

  gcpKey(): string {
    return `AIza${this.chars(`${BASE62}_-`, 35)}`;
  }

  gitlabPat(): string {
    return `glpat-${this.chars(`${BASE62}_-`, 20)}`;
  }

  slackBot(): string {
    return `xoxb-${this.chars(DIGITS, 12)}-${this.chars(DIGITS, 13)}-${this.chars(BASE62, 24)}`;
  }

  slackWebhook(): string {
    return `https://hooks.slack.com/services/T${this.chars(UPPER + DIGITS, 8)}/B${this.chars(UPPER + DIGITS, 10)}/${this.chars(BASE62, 24)}`;
  }

  npmToken(): string {
    return `npm_${this.chars(BASE62, 36)}`;
  }

  jwt(): string {
    const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const claims = b64url(
      JSON.stringify({ sub: this.chars(DIGITS, 8), name: this.chars(UPPER, 6), iat: 1_700_000_000 + this.int(1e7) }),
    );
    const signature = createHmac('sha256', this.chars(BASE62, 32)).update(`${header}.${claims}`).digest('base64url');
    return `${header}.${claims}.${signature}`;
  }

  email(): string {
    const local = this.pick([
      `${this.pick(['anna', 'li.wei', 'j.smith', 'ops+alerts', 'm_kowalski'])}${this.int(100)}`,
      this.chars('abcdefghij', 6),
    ]);
    return `${local}@${this.pick(['mailbox.org', 'corp.acme-widgets.io', 'gmail.com', 'uni-heidelberg.de', 'tiscali.co.uk'])}`;
  }

  phone(): string {
    return this.pick([
      () => `+1${this.pick(['415', '212', '646'])}${this.pick(['555', '727', '382'])}${this.chars(DIGITS, 4)}`,
      () => `+44 20 ${this.chars(DIGITS, 4)} ${this.chars(DIGITS, 4)}`,
      () => `+447${this.chars(DIGITS, 9)}`,
      () => `+49 151 ${this.chars(DIGITS, 8)}`,
      () => `+33 6 ${this.chars(DIGITS, 2)} ${this.chars(DIGITS, 2)} ${this.chars(DIGITS, 2)} ${this.chars(DIGITS, 2)}`,
      () => `+91-98${this.chars(DIGITS, 3)}-${this.chars(DIGITS, 5)}`,
    ])();
  }
}

/** Private keys really generated, in the PEM forms tools print: PKCS#8, SEC1 and PKCS#1. */
export function privateKeys(): string[] {
  const ed = generateKeyPairSync('ed25519');
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
  return [
    ed.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    ec.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    ec.privateKey.export({ format: 'pem', type: 'sec1' }).toString(),
    rsa.privateKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
    rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  ];
}

/** An ES256 JWT signed with a fresh key, to cover asymmetric signatures. */
export function es256Jwt(claims: Record<string, unknown>): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const input = `${b64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: 'k1' }))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

function b64url(s: string): string {
  return Buffer.from(s).toString('base64url');
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, dbl = false; i >= 0; i--, dbl = !dbl) {
    let d = Number(digits[i]);
    if (dbl) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

function mod97(s: string): number {
  let r = 0;
  for (const c of s) r = (r * (Number.parseInt(c, 36) < 10 ? 10 : 100) + Number.parseInt(c, 36)) % 97;
  return r;
}
