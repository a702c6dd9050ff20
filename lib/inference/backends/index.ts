export type { ChatBackend, ChatBackendKind, ChatCall, ChatResult, ChatUsage } from './types';
export { BuiltinChatBackend, descriptionTokenizer, type BuiltinModelDescription } from './builtin';
export { VllmChatBackend, type VllmTarget } from './vllm';
