// Original file: proto/toolgate/v1/contracts.proto


export interface ContractFieldChange {
  'field'?: (string);
  'pointers'?: (string)[];
}

export interface ContractFieldChange__Output {
  'field': (string);
  'pointers': (string)[];
}
