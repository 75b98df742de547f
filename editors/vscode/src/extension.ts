// codesearch in VS Code: a thin client of `codesearch lsp` (symbols, call hierarchy,
// definition, references come from the server) and a "Code Search" quick pick over the
// server's `codesearch/search` request. It activates where a workspace folder has an index (or a
// .codesearch.toml) and on its command, so opening any other folder starts no daemon.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import { answerNote, folderOf, pickRows, SearchAnswer, searchRequest } from "./format";
import { needsRestart, serverArgs, serverSettings } from "./settings";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("codesearch.pick", () => pick()),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (needsRestart((section) => event.affectsConfiguration(section))) {
        await restart();
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}

/** A language client launched with the settings as they are now. */
async function start(): Promise<void> {
  const settings = serverSettings((key) => vscode.workspace.getConfiguration("codesearch").get(key));
  const firstFolder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const serverOptions: ServerOptions = { command: settings.command, args: serverArgs(settings, firstFolder) };
  const clientOptions: LanguageClientOptions = { documentSelector: [{ scheme: "file" }] };
  client = new LanguageClient("codesearch", "codesearch", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (err) {
    vscode.window.showErrorMessage(`codesearch: the language server could not start (${String(err)}); ` +
      "check the codesearch.command setting");
  }
}

async function restart(): Promise<void> {
  const old = client;
  client = undefined;
  try {
    await old?.stop();
  } catch {
    // a server that never started has nothing to stop
  }
  await start();
}

async function pick(): Promise<void> {
  const lc = client;
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
  if (!chosen) {
    return;
  }
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => ({ fsPath: f.uri.fsPath, uri: f.uri }));
  const folder = folderOf(folders, chosen.repo);
  if (!folder) {
    vscode.window.showErrorMessage(`codesearch: no open workspace folder is named ${chosen.repo ?? ""}`);
    return;
  }
  const uri = vscode.Uri.joinPath(folder.uri, chosen.path);
  const position = new vscode.Position(chosen.line, chosen.character);
  await vscode.window.showTextDocument(uri, { selection: new vscode.Range(position, position) });
}
