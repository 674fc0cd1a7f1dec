// Original file: proto/toolgate/v1/validator.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ValidateRequest as _toolgate_v1_ValidateRequest, ValidateRequest__Output as _toolgate_v1_ValidateRequest__Output } from '../../toolgate/v1/ValidateRequest.ts';
import type { ValidateResponse as _toolgate_v1_ValidateResponse, ValidateResponse__Output as _toolgate_v1_ValidateResponse__Output } from '../../toolgate/v1/ValidateResponse.ts';

export interface ValidatorClient extends grpc.Client {
  Validate(argument: _toolgate_v1_ValidateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ValidateResponse__Output>): grpc.ClientUnaryCall;
  Validate(argument: _toolgate_v1_ValidateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ValidateResponse__Output>): grpc.ClientUnaryCall;
  Validate(argument: _toolgate_v1_ValidateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ValidateResponse__Output>): grpc.ClientUnaryCall;
  Validate(argument: _toolgate_v1_ValidateRequest, callback: grpc.requestCallback<_toolgate_v1_ValidateResponse__Output>): grpc.ClientUnaryCall;
  validate(argument: _toolgate_v1_ValidateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ValidateResponse__Output>): grpc.ClientUnaryCall;
  validate(argument: _toolgate_v1_ValidateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ValidateResponse__Output>): grpc.ClientUnaryCall;
  validate(argument: _toolgate_v1_ValidateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ValidateResponse__Output>): grpc.ClientUnaryCall;
  validate(argument: _toolgate_v1_ValidateRequest, callback: grpc.requestCallback<_toolgate_v1_ValidateResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface ValidatorHandlers extends grpc.UntypedServiceImplementation {
  Validate: grpc.handleUnaryCall<_toolgate_v1_ValidateRequest__Output, _toolgate_v1_ValidateResponse>;
  
}

export interface ValidatorDefinition extends grpc.ServiceDefinition {
  Validate: MethodDefinition<_toolgate_v1_ValidateRequest, _toolgate_v1_ValidateResponse, _toolgate_v1_ValidateRequest__Output, _toolgate_v1_ValidateResponse__Output>
}
