// Original file: proto/toolgate/v1/policy.proto


export interface StageResult {
  'name'?: (string);
  'outcome'?: (string);
  'code'?: (string);
}

export interface StageResult__Output {
  'name': (string);
  'outcome': (string);
  'code': (string);
}
