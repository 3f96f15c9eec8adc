/** A JSON primitive. */
export type JsonPrimitive = string | number | boolean | null;
/** Any JSON value: what tools return and what the model sees. */
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * A JSON Schema document describing a tool's arguments. Tool input schemas must be
 * object schemas (`{"type":"object", …}`), as MCP requires.
 */
export type JsonSchema = { readonly [key: string]: unknown };
