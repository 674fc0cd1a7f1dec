// Original file: proto/toolgate/v1/contracts.proto


export interface ListContractsRequest {
  'tool'?: (string);
}

export interface ListContractsRequest__Output {
  'tool': (string);
}
