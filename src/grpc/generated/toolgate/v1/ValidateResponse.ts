// Original file: proto/toolgate/v1/validator.proto

import type { Severity as _toolgate_v1_Severity, Severity__Output as _toolgate_v1_Severity__Output } from '../../toolgate/v1/Severity.ts';

export interface ValidateResponse {
  'valid'?: (boolean);
  'severity'?: (_toolgate_v1_Severity);
  'message'?: (string);
  'code'?: (string);
}

export interface ValidateResponse__Output {
  'valid': (boolean);
  'severity': (_toolgate_v1_Severity__Output);
  'message': (string);
  'code': (string);
}
