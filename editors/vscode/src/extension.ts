// Starts `aurane lsp` (the Aurane language server) for .aur files.
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

function settings(): { inlayHints: boolean; lint: boolean } {
  const config = vscode.workspace.getConfiguration("aurane");
  return {
    inlayHints: config.get<boolean>("inlayHints", true),
    lint: config.get<boolean>("lint", true),
  };
}

function createClient(): LanguageClient {
  const config = vscode.workspace.getConfiguration("aurane");
  const command = config.get<string>("server.path", "aurane");
  const args = config.get<string[]>("server.args", ["lsp"]);
  const serverOptions: ServerOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args, transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: "aurane" }, { scheme: "untitled", language: "aurane" }],
    initializationOptions: settings(),
    synchronize: { configurationSection: "aurane" },
  };
  return new LanguageClient("aurane", "Aurane Language Server", serverOptions, clientOptions);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  client = createClient();
  context.subscriptions.push(
    vscode.commands.registerCommand("aurane.restartServer", async () => {
      if (client) {
        await client.stop();
      }
      client = createClient();
      await client.start();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("aurane.server")) {
        await vscode.commands.executeCommand("aurane.restartServer");
      }
    }),
  );
  try {
    await client.start();
  } catch (error) {
    void vscode.window.showErrorMessage(
      `Could not start the Aurane language server (${String(error)}). ` +
        "Install it with `pip install 'aurane[lsp]'` or set aurane.server.path.",
    );
  }
}

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
  }
}
