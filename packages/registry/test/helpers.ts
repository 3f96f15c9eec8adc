import { codeTool, OpenWorkerError, type JsonSchema, type Tool } from "@openworker/tools-sdk";

export const OBJECT_SCHEMA: JsonSchema = { type: "object", properties: { text: { type: "string" } } };

/** A real native tool (the SDK's code tool) with the given name. */
export function nativeTool(name: string, version = "1.0.0", schema: JsonSchema = OBJECT_SCHEMA): Tool {
  return codeTool(name, `The ${name} tool.`, schema, () => ({ ok: { name } }), { version });
}

/** Runs `action` and returns the OpenWorkerError it threw (fails the test when nothing or something else is thrown). */
export function thrown(action: () => unknown): OpenWorkerError {
  try {
    action();
  } catch (error) {
    if (OpenWorkerError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an OpenWorkerError, nothing was thrown");
}

/** Like {@link thrown}, for a promise. */
export async function rejected(promise: Promise<unknown>): Promise<OpenWorkerError> {
  try {
    await promise;
  } catch (error) {
    if (OpenWorkerError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an OpenWorkerError, the promise resolved");
}
