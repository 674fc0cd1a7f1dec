// Original file: proto/toolgate/v1/discovery.proto


export interface DiscoverRequest {
  'query'?: (string);
  'limit'?: (number);
}

export interface DiscoverRequest__Output {
  'query': (string);
  'limit': (number);
}
