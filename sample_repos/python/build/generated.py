"""Generated file; should be ignored by the indexer."""


def generated_function():
    return 42
