// Original file: proto/toolgate/v1/contracts.proto


export interface LintFinding {
  'rule'?: (string);
  'severity'?: (string);
  'pointer'?: (string);
}

export interface LintFinding__Output {
  'rule': (string);
  'severity': (string);
  'pointer': (string);
}
