"""Settings are checked as they are read: every numeric setting has a range (NaN and infinities
outside it), every word setting its choices, from the file, the environment and flags alike."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from codesearch.config import (
    EMBEDDERS,
    SETTING_CHOICES,
    SETTING_RANGES,
    ConfigError,
    Settings,
    check_setting,
    load_settings,
)


def numeric_fields() -> set[str]:
    return {f.name for f in dataclasses.fields(Settings)
            if type(f.default) in (int, float)}


def test_every_numeric_setting_has_a_range_and_its_default_is_inside():
    assert numeric_fields() == set(SETTING_RANGES)
    Settings()  # the defaults pass their own checks


def test_every_word_setting_names_its_choices_and_the_registry_matches():
    from codesearch.embedding.backends import BACKENDS
    assert set(BACKENDS) == set(EMBEDDERS)
    for name, choices in SETTING_CHOICES.items():
        assert getattr(Settings(), name) in choices


BAD_TOML = [
    ("hnsw_m = 0", "hnsw_m", "from 2 to 512, not 0"),
    ("hnsw_m = 1", "hnsw_m", "not 1"),
    ("weight_keyword = nan", "weight_keyword", "not nan"),
    ("weight_vector = inf", "weight_vector", "not inf"),
    ("text_window_lines = 0", "text_window_lines", "from 1 to"),
    ("embed_batch_size = -3", "embed_batch_size", "not -3"),
    ("rrf_k = -60", "rrf_k", "not -60"),
    ('file_aggregation = "best"', "file_aggregation", "must be one of max_p"),
    ('embedder = "word2vec"', "embedder", "must be one of onnx"),
    ('embed_runtime = "tensorrt"', "embed_runtime", "must be one of auto"),
    ("min_semantic_score = 2.0", "min_semantic_score", "from -1 to 1"),
    ("embed_max_tokens = 1000", "embed_max_tokens", "from 8 to 512"),  # the ONNX model failed mid-index
    ("daemon_idle_minutes = 0", "daemon_idle_minutes", "from 0.01"),
    ("hnsw_m = 2.5", "hnsw_m", "expects an integer"),
    ("hnsw_m = inf", "hnsw_m", "expects an integer"),
    ("ranking = 5", "ranking", "expects true or false"),
    ("hnsw_m = true", "hnsw_m", "expects an integer"),
    ("model = 5", "model", "expects a string"),
]


@pytest.mark.parametrize(("line", "key", "says"), BAD_TOML, ids=[case[0] for case in BAD_TOML])
def test_a_bad_value_in_the_file_is_one_line_naming_file_key_value_and_range(tmp_path: Path, line, key, says):
    (tmp_path / ".codesearch.toml").write_text(line + "\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, environ={})
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path / ".codesearch.toml")) and repr(key) in message and says in message


@pytest.mark.parametrize(("variable", "value", "says"), [
    ("CODESEARCH_WEIGHT_GRAPH", "nan", "'weight_graph' must be from 0 to 1000, not nan"),
    ("CODESEARCH_CANDIDATES", "0", "'candidates' must be from 1 to 100_000, not 0"),
    ("CODESEARCH_HNSW_M", "1e9", "'hnsw_m' expects an integer, got '1e9'"),
    ("CODESEARCH_FILE_AGGREGATION", "sum", "must be one of"),
])
def test_a_bad_value_in_the_environment_names_the_variable(tmp_path: Path, variable, value, says):
    with pytest.raises(ConfigError, match=variable) as caught:
        load_settings(tmp_path, environ={variable: value})
    assert says in str(caught.value)


def test_a_bad_flag_names_the_flag(tmp_path: Path):
    with pytest.raises(ConfigError, match="--embedder: setting 'embedder' must be one of"):
        load_settings(tmp_path, overrides={"embedder": "nope"}, environ={})


def test_settings_made_in_code_are_checked_too():
    with pytest.raises(ConfigError, match="hnsw_m"):
        Settings(hnsw_m=0)
    with pytest.raises(ConfigError, match="rrf_k"):
        dataclasses.replace(Settings(), rrf_k=-1)


def test_values_inside_their_ranges_are_taken(tmp_path: Path):
    (tmp_path / ".codesearch.toml").write_text("hnsw_m = 2\nweight_graph = 0\nmin_semantic_score = -1.0\n"
                                               'file_aggregation = "max_p"\nranking = false\n')
    settings = load_settings(tmp_path, environ={"CODESEARCH_DEBOUNCE_MS": "0", "CODESEARCH_EMBED_WORDS": "no"})
    assert (settings.hnsw_m, settings.weight_graph, settings.min_semantic_score) == (2, 0.0, -1.0)
    assert (settings.file_aggregation, settings.ranking, settings.debounce_ms, settings.embed_words) == \
        ("max_p", False, 0, False)


def test_check_setting_names_key_value_and_range():
    with pytest.raises(ConfigError, match=r"setting 'embed_max_tokens' must be from 8 to 512, not 4"):
        check_setting("embed_max_tokens", 4)
