// Original file: proto/toolgate/v1/grants.proto


export interface ListRowsRequest {
  'principal'?: (string);
  'tool'?: (string);
}

export interface ListRowsRequest__Output {
  'principal': (string);
  'tool': (string);
}
