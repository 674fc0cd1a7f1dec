// Original file: proto/toolgate/v1/approvals.proto


export interface ListPendingRequest {
  'limit'?: (number);
}

export interface ListPendingRequest__Output {
  'limit': (number);
}
