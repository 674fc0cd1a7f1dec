// Original file: proto/toolgate/v1/contracts.proto


export interface ApproveContractRequest {
  'tool'?: (string);
  'digest'?: (string);
}

export interface ApproveContractRequest__Output {
  'tool': (string);
  'digest': (string);
}
