// codesearch in VS Code: a thin client of `codesearch lsp` (symbols, call hierarchy,
// definition, references come from the server) and a "Code Search" quick pick over the
// server's `codesearch/search` request.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import { answerNote, pickRows, SearchAnswer, searchRequest } from "./format";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("codesearch");
  const command = config.get<string>("command", "codesearch");
  const args = ["lsp", ...(config.get<boolean>("startDaemon", true) ? [] : ["--no-start"])];
  const serverOptions: ServerOptions = { command, args };
  const clientOptions: LanguageClientOptions = { documentSelector: [{ scheme: "file" }] };
  client = new LanguageClient("codesearch", "codesearch", serverOptions, clientOptions);
  context.subscriptions.push(vscode.commands.registerCommand("codesearch.pick", () => pick(client)));
  try {
    await client.start();
  } catch (err) {
    vscode.window.showErrorMessage(`codesearch: the language server could not start (${String(err)}); ` +
      "check the codesearch.command setting");
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}

async function pick(lc: LanguageClient | undefined): Promise<void> {
  if (!lc || !lc.isRunning()) {
    vscode.window.showErrorMessage("codesearch: the language server is not running");
    return;
  }
  const query = await vscode.window.showInputBox({ prompt: "Search the code (words, a name, or who calls X)" });
  if (query === undefined) {
    return;
  }
  const config = vscode.workspace.getConfiguration("codesearch");
  let request;
  try {
    request = searchRequest(query, config.get("limit"), config.get("mode"));
  } catch (err) {
    vscode.window.showWarningMessage(`codesearch: ${(err as Error).message}`);
    return;
  }
  let answer: SearchAnswer;
  try {
    answer = await lc.sendRequest<SearchAnswer>("codesearch/search", request);
  } catch (err) {
    vscode.window.showErrorMessage(`codesearch: ${(err as Error).message ?? String(err)}`);
    return;
  }
  const note = answerNote(answer);
  if (note) {
    vscode.window.setStatusBarMessage(`codesearch: ${note}`, 5000);
  }
  const rows = pickRows(answer);
  const chosen = await vscode.window.showQuickPick(rows, { matchOnDescription: true, matchOnDetail: true,
    placeHolder: rows.length ? `${rows.length} results for "${request.query}"` : "nothing found" });
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!chosen || !folder) {
    return;
  }
  const uri = vscode.Uri.joinPath(folder.uri, chosen.path);
  const position = new vscode.Position(chosen.line, chosen.character);
  await vscode.window.showTextDocument(uri, { selection: new vscode.Range(position, position) });
}
