// The extension's own logic, free of the vscode API so that node's test runner can check it:
// the search request sent to `codesearch/search`, the quick-pick rows made of its answer, and the
// workspace folder each row's path is relative to.
import * as path from "node:path";

export type Mode = "hybrid" | "vector" | "keyword" | "graph";
export const MODES: readonly Mode[] = ["hybrid", "vector", "keyword", "graph"];
export const MAX_LIMIT = 1000;

export interface SearchRequest {
  query: string;
  limit: number;
  mode: Mode;
  files: boolean;
}

export interface SearchResult {
  path: string;
  start_line: number;
  end_line: number;
  kind: string;
  name: string;
  qualified_name: string;
  snippet: string;
  name_line?: number;
  name_column?: number;
  stale?: boolean;
  repo?: string; // with several workspace folders: the folder's name as the server gives it
}

export interface SearchAnswer {
  query: string;
  results: SearchResult[];
  partial?: boolean;
  embedded_share?: number;
  note?: string;
}

export interface PickRow {
  label: string;
  description: string;
  detail: string;
  path: string;
  repo?: string;
  line: number; // 0-based, for vscode.Position
  character: number; // 0-based
}

/** The request for `query`, with the settings' limit and mode made valid (or an Error). */
export function searchRequest(query: string, limit: unknown, mode: unknown, files = false): SearchRequest {
  const text = query.trim();
  if (!text) {
    throw new Error("type some words to search for");
  }
  const n = typeof limit === "number" && Number.isFinite(limit) ? Math.round(limit) : 20;
  const chosen = MODES.includes(mode as Mode) ? (mode as Mode) : "hybrid";
  return { query: text, limit: Math.min(Math.max(n, 1), MAX_LIMIT), mode: chosen, files };
}

/** One quick-pick row per result: the name, where it is, and the snippet's first line. */
export function pickRows(answer: SearchAnswer): PickRow[] {
  return answer.results.map((r) => {
    const name = r.qualified_name || r.name || r.path;
    const line = (r.kind === "file" ? r.start_line : r.name_line ?? r.start_line) - 1;
    const firstLine = (r.snippet ?? "").split("\n").find((l) => l.trim() !== "") ?? "";
    return {
      label: `${kindIcon(r.kind)} ${name}`,
      description: `${r.repo ? `${r.repo}: ` : ""}${r.path}:${line + 1}${r.stale ? " (changed since indexed)" : ""}`,
      detail: firstLine.trim().slice(0, 200),
      path: r.path,
      repo: r.repo,
      line: Math.max(line, 0),
      character: Math.max((r.name_column ?? 1) - 1, 0),
    };
  });
}

/** The workspace folder a row's path is relative to. With several folders the server answers for
 * all of them and names each result's folder after its directory's base name (`repo`); a result
 * without one comes from the only folder. Undefined when no open folder has that name. */
export function folderOf<F extends { fsPath: string }>(folders: readonly F[], repo: string | undefined): F | undefined {
  if (repo === undefined) {
    return folders[0];
  }
  return folders.find((folder) => path.basename(folder.fsPath) === repo);
}

/** A line about the answer as a whole, when there is something to say. */
export function answerNote(answer: SearchAnswer): string | undefined {
  if (answer.note) {
    return answer.note;
  }
  if (answer.partial) {
    const share = Math.round((answer.embedded_share ?? 0) * 100);
    return `vectors are still being built (${share}% done): results may miss some code`;
  }
  return undefined;
}

function kindIcon(kind: string): string {
  const icons: Record<string, string> = {
    class: "$(symbol-class)", struct: "$(symbol-structure)", interface: "$(symbol-interface)",
    function: "$(symbol-function)", method: "$(symbol-method)", enum: "$(symbol-enum)",
    file: "$(file)", module: "$(symbol-module)", section: "$(symbol-string)",
  };
  return icons[kind] ?? "$(symbol-misc)";
}
