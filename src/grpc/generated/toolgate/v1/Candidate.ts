// Original file: proto/toolgate/v1/discovery.proto


export interface Candidate {
  'name'?: (string);
  'score'?: (number | string);
  'matchReasons'?: (string)[];
  'tier'?: (string);
  'sideEffect'?: (string);
}

export interface Candidate__Output {
  'name': (string);
  'score': (number);
  'matchReasons': (string)[];
  'tier': (string);
  'sideEffect': (string);
}
