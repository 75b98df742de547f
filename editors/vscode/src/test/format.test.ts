import { strict as assert } from "node:assert";
import { test } from "node:test";
import { answerNote, folderOf, pickRows, searchRequest } from "../format";

const answer = {
  query: "parse config",
  results: [
    { path: "config.py", start_line: 8, end_line: 18, kind: "function", name: "parse_config",
      qualified_name: "parse_config", snippet: "\ndef parse_config(path: str) -> dict:\n    ...", name_line: 8,
      name_column: 5 },
    { path: "README.md", start_line: 1, end_line: 40, kind: "file", name: "README.md", qualified_name: "",
      snippet: "# Inventory", stale: true },
  ],
};

test("a request trims the query and makes the settings valid", () => {
  assert.deepEqual(searchRequest("  retry backoff ", 5000, "psychic"),
    { query: "retry backoff", limit: 1000, mode: "hybrid", files: false });
  assert.deepEqual(searchRequest("x", 0, "keyword", true), { query: "x", limit: 1, mode: "keyword", files: true });
  assert.deepEqual(searchRequest("x", "ten", undefined).limit, 20);
  assert.throws(() => searchRequest("   ", 10, "hybrid"), /type some words/);
});

test("rows point at the definition's name, files at their first line", () => {
  const rows = pickRows(answer);
  assert.equal(rows[0].label, "$(symbol-function) parse_config");
  assert.equal(rows[0].description, "config.py:8");
  assert.equal(rows[0].detail, "def parse_config(path: str) -> dict:");
  assert.deepEqual([rows[0].line, rows[0].character], [7, 4]);
  assert.equal(rows[1].label, "$(file) README.md");
  assert.equal(rows[1].description, "README.md:1 (changed since indexed)");
  assert.deepEqual([rows[1].line, rows[1].character], [0, 0]);
});

test("the answer's note, or a word about partial vectors", () => {
  assert.equal(answerNote(answer), undefined);
  assert.equal(answerNote({ ...answer, partial: true, embedded_share: 0.42 }),
    "vectors are still being built (42% done): results may miss some code");
  assert.equal(answerNote({ ...answer, note: "fitted to max_tokens 100" }), "fitted to max_tokens 100");
});

test("a result opens in the workspace folder it came from", () => {
  const folders = [{ fsPath: "/work/service" }, { fsPath: "/home/me/client" }];
  const rows = pickRows({ query: "retry", results: [
    { ...answer.results[0], path: "app.py", repo: "client" },
    { ...answer.results[0], path: "inventory.py", repo: "service" },
  ] });
  assert.equal(rows[0].description, "client: app.py:8");
  assert.equal(folderOf(folders, rows[0].repo), folders[1]);
  assert.equal(folderOf(folders, rows[1].repo), folders[0]);
  assert.equal(folderOf(folders, undefined), folders[0]); // one folder: its results carry no repo
  assert.equal(folderOf(folders, "elsewhere"), undefined);
});
