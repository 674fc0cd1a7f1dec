// Original file: proto/toolgate/v1/grants.proto


export interface GetRevisionRequest {
  'bump'?: (boolean);
}

export interface GetRevisionRequest__Output {
  'bump': (boolean);
}
