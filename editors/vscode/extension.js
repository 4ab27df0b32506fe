// Registers the `jdbg` debug type: VS Code spawns `jdb-rs dap`, which speaks the Debug Adapter
// Protocol on stdin/stdout.
const vscode = require('vscode');

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('jdbg', {
      createDebugAdapterDescriptor() {
        const exe = vscode.workspace.getConfiguration('jdbg').get('executable') || 'jdb-rs';
        return new vscode.DebugAdapterExecutable(exe, ['dap']);
      },
    }),
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
