// Original file: proto/toolgate/v1/common.proto


export interface ApprovalRule {
  'approverScope'?: (string);
  'expiresInSeconds'?: (number);
  'selfApproval'?: (boolean);
}

export interface ApprovalRule__Output {
  'approverScope': (string);
  'expiresInSeconds': (number);
  'selfApproval': (boolean);
}
