// What the extension reads from its settings to launch `codesearch lsp`, free of the vscode API so
// that node's test runner can check it: the command line, and whether a change asks for a restart.
import * as path from "node:path";

/** The settings the language server is launched with; a change to any of them restarts it. */
export interface ServerSettings {
  command: string;
  startDaemon: boolean;
  indexDir: string; // "" for the default (ROOT/.codesearch)
}

export const SERVER_KEYS: readonly (keyof ServerSettings)[] = ["command", "startDaemon", "indexDir"];

/** The settings as `get` (a configuration's getter) gives them, each made valid. */
export function serverSettings(get: (key: string) => unknown): ServerSettings {
  const command = get("command");
  const indexDir = get("indexDir");
  return {
    command: typeof command === "string" && command.trim() ? command.trim() : "codesearch",
    startDaemon: get("startDaemon") !== false,
    indexDir: typeof indexDir === "string" ? indexDir.trim() : "",
  };
}

/** The server's arguments; a relative index folder is taken from the first workspace folder,
 * as the server itself cannot know which folder the user meant. */
export function serverArgs(settings: ServerSettings, firstFolder: string | undefined): string[] {
  const args = ["lsp"];
  if (!settings.startDaemon) {
    args.push("--no-start");
  }
  if (settings.indexDir) {
    const dir = firstFolder && !path.isAbsolute(settings.indexDir)
      ? path.resolve(firstFolder, settings.indexDir) : settings.indexDir;
    args.push("--index-dir", dir);
  }
  return args;
}

/** Whether a configuration change touches what the server was launched with. */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return SERVER_KEYS.some((key) => affects(`codesearch.${key}`));
}
