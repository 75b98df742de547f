"""What a JavaScript or TypeScript project's package.json and tsconfig.json say about its imports."""

from __future__ import annotations

from codesearch.store.script_project import ScriptProject


def test_name_and_aliases_from_the_nearest_folder_with_comments_base_url_and_outside_targets(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "@acme/shop"}')
    (tmp_path / "tsconfig.json").write_text(
        '/* the project */ {"compilerOptions": {"baseUrl": "./lib", // sources\n'
        '"paths": {"~/*": ["./*"], "~/deep/*": ["./nested/*.ts"], "exact": ["./e.ts"], '
        '"gone/*": ["../../elsewhere/*"], "url": ["http://x//y"],}}}')
    root = tmp_path / "lib"
    root.mkdir()
    project = ScriptProject.of_root(str(root))
    assert project.package_name == "@acme/shop"
    assert project.aliased("~/cart") == ["cart"]
    assert project.aliased("~/deep/a") == ["nested/a.ts"]  # the longest text before the `*` wins
    assert project.aliased("exact") == ["e.ts"] and project.aliased("exact/x") == []
    assert project.aliased("gone/x") == [] and project.aliased("react") == []


def test_no_project_files_or_broken_ones_give_nothing(tmp_path):
    assert ScriptProject.of_root(str(tmp_path)) == ScriptProject()
    (tmp_path / "package.json").write_text("{not json")
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"paths": ["not", "a", "map"]}}')
    assert ScriptProject.of_root(str(tmp_path)) == ScriptProject()
