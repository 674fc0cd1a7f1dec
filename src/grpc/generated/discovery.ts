import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { Candidate as _toolgate_v1_Candidate, Candidate__Output as _toolgate_v1_Candidate__Output } from './toolgate/v1/Candidate.ts';
import type { DiscoverRequest as _toolgate_v1_DiscoverRequest, DiscoverRequest__Output as _toolgate_v1_DiscoverRequest__Output } from './toolgate/v1/DiscoverRequest.ts';
import type { DiscoverResponse as _toolgate_v1_DiscoverResponse, DiscoverResponse__Output as _toolgate_v1_DiscoverResponse__Output } from './toolgate/v1/DiscoverResponse.ts';
import type { DiscoveryServiceClient as _toolgate_v1_DiscoveryServiceClient, DiscoveryServiceDefinition as _toolgate_v1_DiscoveryServiceDefinition } from './toolgate/v1/DiscoveryService.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  toolgate: {
    v1: {
      Candidate: MessageTypeDefinition<_toolgate_v1_Candidate, _toolgate_v1_Candidate__Output>
      DiscoverRequest: MessageTypeDefinition<_toolgate_v1_DiscoverRequest, _toolgate_v1_DiscoverRequest__Output>
      DiscoverResponse: MessageTypeDefinition<_toolgate_v1_DiscoverResponse, _toolgate_v1_DiscoverResponse__Output>
      DiscoveryService: SubtypeConstructor<typeof grpc.Client, _toolgate_v1_DiscoveryServiceClient> & { service: _toolgate_v1_DiscoveryServiceDefinition }
    }
  }
}

