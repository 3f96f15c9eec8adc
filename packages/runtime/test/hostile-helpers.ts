// Shared by hostile.test.ts and hostile-hosts.test.ts.

/** A policy that approves every call without asking. */
export const bypass = { name: "test-bypass", mode: "bypass" } as const;
