// Anything exported here is public API of @openworker/model-openai.
export { OPENAI_PROVIDER_CODES } from "./errors.js";
export { OpenAICompatibleProvider, type OpenAICompatibleOptions } from "./provider.js";
