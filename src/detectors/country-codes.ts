/**
 * ITU-T E.164 country calling codes in use (geographic areas, as assigned in
 * the ITU's list of E.164 codes); the codes are prefix-free, so a number's
 * code is the one of its first one, two or three digits that is listed.
 */
export const COUNTRY_CODES: ReadonlySet<string> = new Set([
  '1', '7',
  '20', '27', '30', '31', '32', '33', '34', '36', '39', '40', '41', '43', '44', '45', '46', '47', '48', '49',
  '51', '52', '53', '54', '55', '56', '57', '58', '60', '61', '62', '63', '64', '65', '66',
  '81', '82', '84', '86', '90', '91', '92', '93', '94', '95', '98',
  '211', '212', '213', '216', '218',
  ...range(220, 258), ...range(260, 269), '290', '291', '297', '298', '299',
  ...range(350, 359), ...range(370, 383), '385', '386', '387', '389',
  '420', '421', '423',
  ...range(500, 509), ...range(590, 599),
  '670', ...range(672, 683), ...range(685, 692),
  '850', '852', '853', '855', '856', '880', '886',
  ...range(960, 968), ...range(970, 977), ...range(992, 996), '998',
]);

function range(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => String(from + i));
}

/**
 * National significant number lengths of the most-called codes, from their
 * national numbering plans; other codes need GENERIC_MIN_NSN digits, and
 * E.164's 15-digit ceiling caps them all.
 */
export const NSN_LENGTHS: ReadonlyMap<string, readonly [number, number]> = new Map(Object.entries({
  1: [10, 10], 7: [10, 10], 20: [8, 10], 27: [9, 9], 30: [10, 10], 31: [9, 9], 32: [8, 9], 33: [9, 9],
  34: [9, 9], 36: [8, 9], 39: [6, 11], 40: [9, 9], 41: [9, 9], 44: [9, 10], 45: [8, 8], 46: [7, 10],
  47: [8, 8], 48: [9, 9], 49: [6, 13], 51: [8, 9], 52: [10, 10], 54: [10, 11], 55: [10, 11], 56: [9, 9],
  57: [8, 10], 58: [10, 10], 60: [8, 10], 61: [9, 9], 62: [8, 12], 63: [8, 10], 64: [8, 10], 65: [8, 8],
  66: [8, 9], 81: [9, 10], 82: [8, 10], 84: [9, 10], 86: [10, 11], 90: [10, 10], 91: [10, 10], 92: [9, 10],
  98: [10, 10],
}));
export const GENERIC_MIN_NSN = 6;
