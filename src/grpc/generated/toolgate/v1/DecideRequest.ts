// Original file: proto/toolgate/v1/approvals.proto


export interface DecideRequest {
  'id'?: (string);
  'approve'?: (boolean);
}

export interface DecideRequest__Output {
  'id': (string);
  'approve': (boolean);
}
