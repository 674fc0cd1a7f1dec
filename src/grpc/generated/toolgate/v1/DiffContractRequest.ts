// Original file: proto/toolgate/v1/contracts.proto


export interface DiffContractRequest {
  'tool'?: (string);
}

export interface DiffContractRequest__Output {
  'tool': (string);
}
