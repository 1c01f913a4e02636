// The few Node built-ins the tests read the Rust sources with (commands.test.ts), declared here
// because the window's type check has no Node types (it runs in a webview, not in Node).
declare module "node:fs" {
  export function readFileSync(path: string, encoding: "utf8"): string;
  export function readdirSync(
    path: string,
    options: { withFileTypes: true },
  ): { name: string; isDirectory(): boolean; isFile(): boolean }[];
}

declare module "node:url" {
  export function fileURLToPath(url: string): string;
}
