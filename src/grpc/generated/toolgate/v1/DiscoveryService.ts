// Original file: proto/toolgate/v1/discovery.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { DiscoverRequest as _toolgate_v1_DiscoverRequest, DiscoverRequest__Output as _toolgate_v1_DiscoverRequest__Output } from '../../toolgate/v1/DiscoverRequest.ts';
import type { DiscoverResponse as _toolgate_v1_DiscoverResponse, DiscoverResponse__Output as _toolgate_v1_DiscoverResponse__Output } from '../../toolgate/v1/DiscoverResponse.ts';

export interface DiscoveryServiceClient extends grpc.Client {
  Discover(argument: _toolgate_v1_DiscoverRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DiscoverResponse__Output>): grpc.ClientUnaryCall;
  Discover(argument: _toolgate_v1_DiscoverRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_DiscoverResponse__Output>): grpc.ClientUnaryCall;
  Discover(argument: _toolgate_v1_DiscoverRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DiscoverResponse__Output>): grpc.ClientUnaryCall;
  Discover(argument: _toolgate_v1_DiscoverRequest, callback: grpc.requestCallback<_toolgate_v1_DiscoverResponse__Output>): grpc.ClientUnaryCall;
  discover(argument: _toolgate_v1_DiscoverRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DiscoverResponse__Output>): grpc.ClientUnaryCall;
  discover(argument: _toolgate_v1_DiscoverRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_DiscoverResponse__Output>): grpc.ClientUnaryCall;
  discover(argument: _toolgate_v1_DiscoverRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DiscoverResponse__Output>): grpc.ClientUnaryCall;
  discover(argument: _toolgate_v1_DiscoverRequest, callback: grpc.requestCallback<_toolgate_v1_DiscoverResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface DiscoveryServiceHandlers extends grpc.UntypedServiceImplementation {
  Discover: grpc.handleUnaryCall<_toolgate_v1_DiscoverRequest__Output, _toolgate_v1_DiscoverResponse>;
  
}

export interface DiscoveryServiceDefinition extends grpc.ServiceDefinition {
  Discover: MethodDefinition<_toolgate_v1_DiscoverRequest, _toolgate_v1_DiscoverResponse, _toolgate_v1_DiscoverRequest__Output, _toolgate_v1_DiscoverResponse__Output>
}
