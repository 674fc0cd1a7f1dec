// Original file: proto/grpc/health/v1/health.proto


export interface HealthCheckRequest {
  'service'?: (string);
}

export interface HealthCheckRequest__Output {
  'service': (string);
}
