import { strict as assert } from "node:assert";
import { test } from "node:test";
import { needsRestart, serverArgs, serverSettings } from "../settings";

const settingsOf = (values: Record<string, unknown>) => serverSettings((key) => values[key]);

test("settings are made valid: a blank command is the default, startDaemon is on unless false", () => {
  assert.deepEqual(settingsOf({}), { command: "codesearch", startDaemon: true, indexDir: "" });
  assert.deepEqual(settingsOf({ command: "  ", startDaemon: "no", indexDir: 3 }),
    { command: "codesearch", startDaemon: true, indexDir: "" });
  assert.deepEqual(settingsOf({ command: " /opt/cs/bin/codesearch ", startDaemon: false, indexDir: " idx " }),
    { command: "/opt/cs/bin/codesearch", startDaemon: false, indexDir: "idx" });
});

test("the server's arguments carry --no-start and the index folder, relative ones from the first folder", () => {
  assert.deepEqual(serverArgs(settingsOf({}), "/work/repo"), ["lsp"]);
  assert.deepEqual(serverArgs(settingsOf({ startDaemon: false, indexDir: "/var/idx" }), "/work/repo"),
    ["lsp", "--no-start", "--index-dir", "/var/idx"]);
  assert.deepEqual(serverArgs(settingsOf({ indexDir: "../idx/repo" }), "/work/repo"),
    ["lsp", "--index-dir", "/work/idx/repo"]);
  assert.deepEqual(serverArgs(settingsOf({ indexDir: "idx" }), undefined), ["lsp", "--index-dir", "idx"]);
});

test("a change to how the server is launched restarts it; limit and mode are read at each search", () => {
  const changed = (...sections: string[]) => (section: string) => sections.includes(section);
  assert.equal(needsRestart(changed("codesearch.command")), true);
  assert.equal(needsRestart(changed("codesearch.indexDir")), true);
  assert.equal(needsRestart(changed("codesearch.startDaemon")), true);
  assert.equal(needsRestart(changed("codesearch.limit", "codesearch.mode")), false);
  assert.equal(needsRestart(changed("editor.fontSize")), false);
});
