// Anything exported here is public API of @openworker/model-ai-sdk.
export type { ImageDelivery } from "./prompt.js";
export { AiSdkModelProvider, fromAiSdk, type AiSdkModelSource, type AiSdkProviderOptions } from "./provider.js";
