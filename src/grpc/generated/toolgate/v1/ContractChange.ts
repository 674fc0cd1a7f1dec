// Original file: proto/toolgate/v1/contracts.proto


export interface ContractChange {
  'pointer'?: (string);
  'beforeJson'?: (string);
  'afterJson'?: (string);
}

export interface ContractChange__Output {
  'pointer': (string);
  'beforeJson': (string);
  'afterJson': (string);
}
