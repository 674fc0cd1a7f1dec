/**
 * What the injector decides for one pod, and the helpers that phrase a
 * refusal: the Kubernetes field path at fault and a message saying what is
 * wrong and how to fix it.
 */
import type { PatchOp } from './k8s.ts';

export type Injection =
  | { readonly kind: 'patch'; readonly patch: readonly PatchOp[]; readonly warnings: readonly string[] }
  /** The pod is admitted as it is: it did not opt in, or toolgate is already in front of its port. */
  | { readonly kind: 'skip'; readonly reason: string }
  /** `field` is the Kubernetes field path at fault; `message` says what is wrong and how to fix it. */
  | { readonly kind: 'deny'; readonly field: string; readonly message: string };

export const skip = (reason: string): Injection => ({ kind: 'skip', reason });
export const deny = (field: string, message: string): Injection => ({ kind: 'deny', field, message });
export const annotationField = (annotation: string): string => `metadata.annotations[${annotation}]`;
