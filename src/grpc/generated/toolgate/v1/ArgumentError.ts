// Original file: proto/toolgate/v1/policy.proto


export interface ArgumentError {
  'instancePath'?: (string);
  'keyword'?: (string);
}

export interface ArgumentError__Output {
  'instancePath': (string);
  'keyword': (string);
}
