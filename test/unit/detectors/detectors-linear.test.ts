import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DETECTOR_IDS, DETECTORS } from '../../../src/detectors/detectors.ts';

/**
 * Inputs of about 1 MB built to make a backtracking regex or a naive scanner
 * go quadratic: long runs of a detector's alphabet, repeated prefixes with no
 * ending, separators without end. Each detector must simply finish; a
 * quadratic one would not within the test runner's patience. No timing is
 * asserted, since the machine is shared.
 */
const ADVERSARIAL: Record<string, string> = {
  letters: 'a'.repeat(1e6),
  digitsSpaced: '1 '.repeat(5e5),
  digitsDashed: '4-'.repeat(5e5),
  digits: '4'.repeat(1e6),
  aws: 'AKIA'.repeat(2e5),
  pemHeaders: '-----BEGIN '.repeat(1e5),
  pemNoFooter: '-----BEGIN RSA PRIVATE KEY-----\nMIIE'.repeat(3e4),
  jwtish: 'eyJhbGciOiJIUzI1NiJ9.eyJ-'.repeat(4e4),
  jwtDots: 'ey.'.repeat(3e5),
  at: 'a@'.repeat(5e5),
  emailDots: 'a.'.repeat(5e5) + '@b',
  plus: '+1 '.repeat(3e5),
  slack: 'xoxb-1234567890-'.repeat(6e4),
  gitlab: 'glpat-'.repeat(2e5),
  iban: 'DE89 '.repeat(2e5),
  webhook: 'hooks.slack.com/services/'.repeat(4e4),
};

for (const id of DETECTOR_IDS) {
  it(`${id} completes on 1 MB adversarial inputs`, () => {
    const detector = DETECTORS.get(id)!;
    for (const [name, text] of Object.entries(ADVERSARIAL)) {
      const ranges = detector.find(text);
      assert.ok(Array.isArray(ranges), name);
      for (let i = 1; i < ranges.length; i++)
        assert.ok(ranges[i]![0] >= ranges[i - 1]![1], `${id} on ${name}: ranges overlap`);
    }
  });
}
