// Original file: proto/toolgate/v1/common.proto


export interface Principal {
  'id'?: (string);
  'scopes'?: (string)[];
  'credentialStrength'?: (string);
}

export interface Principal__Output {
  'id': (string);
  'scopes': (string)[];
  'credentialStrength': (string);
}
