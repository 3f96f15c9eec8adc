// Read when the CLI is built (tsup inlines it into dist/, and a host bundle carries it on):
// a package.json found at run time would be the host's in a bundled host.
import cliPackage from "../../package.json" with { type: "json" };

/** This package's version (`@openworker/cli`), as `--version` and the MCP server's `initialize` report it. */
export const CLI_VERSION: string = cliPackage.version;
