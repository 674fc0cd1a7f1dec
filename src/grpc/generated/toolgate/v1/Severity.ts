// Original file: proto/toolgate/v1/validator.proto

export const Severity = {
  SEVERITY_UNSPECIFIED: 'SEVERITY_UNSPECIFIED',
  SEVERITY_INFO: 'SEVERITY_INFO',
  SEVERITY_WARNING: 'SEVERITY_WARNING',
  SEVERITY_ERROR: 'SEVERITY_ERROR',
} as const;

export type Severity =
  | 'SEVERITY_UNSPECIFIED'
  | 0
  | 'SEVERITY_INFO'
  | 1
  | 'SEVERITY_WARNING'
  | 2
  | 'SEVERITY_ERROR'
  | 3

export type Severity__Output = typeof Severity[keyof typeof Severity]
