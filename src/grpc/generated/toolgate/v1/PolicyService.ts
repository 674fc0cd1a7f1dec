// Original file: proto/toolgate/v1/policy.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ExplainRequest as _toolgate_v1_ExplainRequest, ExplainRequest__Output as _toolgate_v1_ExplainRequest__Output } from '../../toolgate/v1/ExplainRequest.ts';
import type { ExplainResponse as _toolgate_v1_ExplainResponse, ExplainResponse__Output as _toolgate_v1_ExplainResponse__Output } from '../../toolgate/v1/ExplainResponse.ts';

export interface PolicyServiceClient extends grpc.Client {
  Explain(argument: _toolgate_v1_ExplainRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ExplainResponse__Output>): grpc.ClientUnaryCall;
  Explain(argument: _toolgate_v1_ExplainRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ExplainResponse__Output>): grpc.ClientUnaryCall;
  Explain(argument: _toolgate_v1_ExplainRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ExplainResponse__Output>): grpc.ClientUnaryCall;
  Explain(argument: _toolgate_v1_ExplainRequest, callback: grpc.requestCallback<_toolgate_v1_ExplainResponse__Output>): grpc.ClientUnaryCall;
  explain(argument: _toolgate_v1_ExplainRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ExplainResponse__Output>): grpc.ClientUnaryCall;
  explain(argument: _toolgate_v1_ExplainRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ExplainResponse__Output>): grpc.ClientUnaryCall;
  explain(argument: _toolgate_v1_ExplainRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ExplainResponse__Output>): grpc.ClientUnaryCall;
  explain(argument: _toolgate_v1_ExplainRequest, callback: grpc.requestCallback<_toolgate_v1_ExplainResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface PolicyServiceHandlers extends grpc.UntypedServiceImplementation {
  Explain: grpc.handleUnaryCall<_toolgate_v1_ExplainRequest__Output, _toolgate_v1_ExplainResponse>;
  
}

export interface PolicyServiceDefinition extends grpc.ServiceDefinition {
  Explain: MethodDefinition<_toolgate_v1_ExplainRequest, _toolgate_v1_ExplainResponse, _toolgate_v1_ExplainRequest__Output, _toolgate_v1_ExplainResponse__Output>
}
