// Anything exported here is public API of @openworker/model-openai/testing.
export {
  chatCompletion,
  completionChunks,
  errorReply,
  startFakeOpenAI,
  type FakeChatRequest,
  type FakeHttpReply,
  type FakeOpenAIServer,
  type FakeReply,
  type FakeScriptStep,
  type FakeToolCall,
} from "./fake-endpoint.js";
